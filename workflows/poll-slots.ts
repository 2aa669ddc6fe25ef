import { quota } from '../domain/run-errors';

/**
 * How many long-polls (watch-thread, first-turn, a client's wait, a receive) may wait on one workflow at
 * once. Temporal keeps at most 10 updates in flight per workflow (`history.maxInFlightUpdates`) and
 * refuses the 11th with RESOURCE_EXHAUSTED: ten subscribers of one thread would take every slot, and
 * no message, interrupt or answer could reach it until a poll ended. Past this, a long-poll is refused
 * (QuotaExceeded `longPolls`, without a trace in history) and the client polls again shortly.
 */
export const maxLongPolls = 5;

/** The longest one long-poll waits before it answers and the client polls again. */
export const longPollMs = 20_000;

/** SPEC S3.10: the long-polls waiting on this workflow, at most {@link maxLongPolls}. */
export class PollSlots {
  private waiting = 0;

  /** For validators: QuotaExceeded when every slot is taken. */
  check(what: string): void {
    if (this.waiting >= maxLongPolls)
      throw quota(
        `${what}: ${maxLongPolls} long-polls already wait on this workflow, which keeps the rest of Temporal's 10 update slots for operations: poll again shortly`,
        // The client sends it again after a pause (client/updates.ts): nothing happened.
        { limit: 'longPolls', value: maxLongPolls, retryLater: true },
      );
  }

  /**
   * Runs a long-poll in a slot (taken when the handler starts, before the next update is validated).
   * The poll's own promise is returned, so its answer leaves exactly when it would without the slot.
   */
  hold<Answer>(poll: () => Promise<Answer>): Promise<Answer> {
    this.waiting++;
    const answer = poll();
    const release = () => void this.waiting--;
    answer.then(release, release);
    return answer;
  }
}
