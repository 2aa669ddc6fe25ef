// SPEC S4.7: what a sender remembers of the turns its triggering messages asked, and when it forgets.
import { AskedTurns } from '../../domain/asked-turns';
import type { WaitRequest } from '../../domain/operations';

const a = 'thread_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const b = 'thread_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const request = (threadIds: string[], turns?: Record<string, number>): WaitRequest =>
  ({ threadIds, timeoutMs: 1_000, ...(turns ? { turns } : {}) }) as WaitRequest;
const outcome = (threadId: string, status: string, turn?: number) =>
  ({
    threadId,
    status,
    ...(turn ? { latestTurn: { turn, status: 'completed', tokens: 0, endedAt: '' } } : {}),
  }) as never;

test('a wait names the latest asked turn of each thread it waits on; its own turns win', () => {
  const asked = new AskedTurns();
  const plain = request([a, b]);
  expect(asked.fill(plain)).toBe(plain);
  asked.note(a, {});
  expect(asked.fill(plain)).toBe(plain);
  asked.note(a, { turn: 3 });
  asked.note(a, { turn: 2 });
  expect(asked.fill(plain).turns).toEqual({ [a]: 3 });
  expect(asked.fill(request([a], { [a]: 7 })).turns).toEqual({ [a]: 7 });
  expect(asked.fill(request([b]))).toEqual(request([b]));
});

test('a thread is forgotten once a wait shows its asked turn ended, or the thread ended', () => {
  const asked = new AskedTurns();
  asked.note(a, { turn: 3 });
  asked.note(b, { turn: 5 });
  asked.settle({ timedOut: false, outcomes: [outcome(a, 'idle', 2), outcome(b, 'cancelled', 4)] });
  expect(asked.fill(request([a, b])).turns).toEqual({ [a]: 3 });
  asked.settle({ timedOut: false, outcomes: [outcome(a, 'idle', 3)] });
  expect(asked.fill(request([a])).turns).toBeUndefined();
});

test('it remembers a bounded number of threads, forgetting the least recently asked', () => {
  const asked = new AskedTurns(2);
  const c = 'thread_cccccccccccccccccccccccccccccccc';
  asked.note(a, { turn: 1 });
  asked.note(b, { turn: 1 });
  asked.note(a, { turn: 2 });
  asked.note(c, { turn: 1 });
  expect(asked.fill(request([a, b, c])).turns).toEqual({ [a]: 2, [c]: 1 });
});
