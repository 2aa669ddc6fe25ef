import type { WaitRequest, WaitResult } from './operations';
import { isTerminal } from './schemas';

/** The most recipients one sender remembers a turn of; the oldest is forgotten first. */
export const maxAskedTurns = 1000;

/**
 * SPEC S4.7: the turn each triggering message of one sender asked of its recipient (the message's
 * receipt says which), so that the sender's next wait on that recipient counts that turn's end, not the
 * idle state before it: the turn's start may not have reached the root when the wait does. Kept by the
 * client's thread controls, each agent's controls and the root's; a wait's own `turns` win.
 */
export class AskedTurns {
  private readonly asked = new Map<string, number>();

  constructor(private readonly max = maxAskedTurns) {}

  /** A message to `recipient` was taken; its receipt's `turn` (when it asked for one) is remembered. */
  note(recipient: string, receipt: { turn?: number | undefined }): void {
    if (receipt.turn === undefined) return;
    const turn = Math.max(receipt.turn, this.asked.get(recipient) ?? 0);
    this.asked.delete(recipient);
    this.asked.set(recipient, turn);
    if (this.asked.size > this.max) this.asked.delete(this.asked.keys().next().value!);
  }

  /**
   * Runs a wait with the remembered turns of its threads added (`run` gets the request as it was too,
   * for a caller that may not send them), then forgets those its result shows ended.
   */
  async wait<Result extends WaitResult>(
    request: WaitRequest,
    run: (filled: WaitRequest, asked: WaitRequest) => Promise<Result>,
  ): Promise<Result> {
    const result = await run(this.fill(request), request);
    this.settle(result);
    return result;
  }

  /** The request with the remembered turns of its threads added; the same object when there are none. */
  fill(request: WaitRequest): WaitRequest {
    const turns: Record<string, number> = { ...request.turns };
    let added = false;
    for (const id of request.threadIds) {
      const asked = this.asked.get(id);
      if (turns[id] === undefined && asked !== undefined) {
        turns[id] = asked;
        added = true;
      }
    }
    return added ? { ...request, turns } : request;
  }

  /** Forgets the threads whose asked turn the result shows ended (or that ended themselves). */
  settle(result: WaitResult): void {
    for (const { threadId, status, latestTurn } of result.outcomes) {
      const asked = this.asked.get(threadId);
      if (asked !== undefined && (isTerminal(status) || (latestTurn?.turn ?? 0) >= asked))
        this.asked.delete(threadId);
    }
  }
}
