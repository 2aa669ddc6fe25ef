import { randomUUID } from 'node:crypto';
import { parseInput } from '../../domain/errors';
import { newId } from '../../domain/ids';
import type { RootRunState } from '../../domain/run-state';
import { SendMessageRequest, type TurnOutcome } from '../../domain/schemas';
import { admitToRoot, now, scopeOf } from '../helpers/run-state';

/** Shared steps of the RootRunState example tests (run-*.test.ts beside this file). */

/** A completed turn `turn` that used `tokens`. */
export const outcome = (turn: number, tokens = 0): TurnOutcome => ({
  turn,
  status: 'completed',
  result: `turn ${turn} done`,
  tokens,
  endedAt: now,
});

/**
 * Sends `content` from thread `from` to thread `to` of `state`'s run: admitted to the root's mailbox
 * when `to` is the root; otherwise only checked (the recipient's own workflow numbers it).
 */
export const message = (
  state: RootRunState,
  from: string,
  to: string,
  content = 'hello',
  triggerTurn = false,
): { sender: string; recipient: string; seq?: number } => {
  const scope = scopeOf(state, from);
  if (to !== state.rootId) {
    state.checkMessage(
      scope,
      parseInput(SendMessageRequest, { recipient: to, content, triggerTurn }, 'message'),
    );
    return { sender: from, recipient: to };
  }
  return admitToRoot(
    state,
    scope,
    { recipient: to, content, triggerTurn },
    newId('message', randomUUID),
    now,
  );
};
