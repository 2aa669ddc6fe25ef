import { randomUUID } from 'node:crypto';
import { newId } from '../../domain/ids';
import type { RootRunState } from '../../domain/run-state';
import type { TurnOutcome } from '../../domain/schemas';
import { now, scopeOf } from '../helpers/run-state';

/** Shared steps of the RootRunState example tests (run-*.test.ts beside this file). */

/** A completed turn `turn` that used `tokens`. */
export const outcome = (turn: number, tokens = 0): TurnOutcome => ({
  turn,
  status: 'completed',
  result: `turn ${turn} done`,
  tokens,
  endedAt: now,
});

/** Sends `content` from thread `from` to thread `to` of `state`'s run. */
export const message = (
  state: RootRunState,
  from: string,
  to: string,
  content = 'hello',
  triggerTurn = false,
) =>
  state.prepareMessage(
    scopeOf(state, from),
    { recipient: to, content, triggerTurn },
    newId('message', randomUUID),
    now,
  );
