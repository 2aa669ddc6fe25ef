// SPEC S3.10: an answer of the root run — a listing, a wait's outcomes, a spawned thread — fits one
// payload whatever the tree holds: threads' tasks and turn results are clipped evenly, least first, and
// an answer that fits is returned as it is.
import { fittedAnswer, fittedThreads, fittedWait, maxAnswerBytes } from '../../domain/answer-bounds';
import { jsonBytes } from '../../domain/bytes';
import { carriedResultBytes, maxTurnResultBytes } from '../../domain/carry-bounds';
import type { AgentThread, TurnOutcome } from '../../domain/schemas';
import { id, worst } from '../helpers/worst-case';

const rootId = id('thread', 1);
const outcome = (turn: number, result: string): TurnOutcome => ({
  turn,
  status: 'completed',
  result,
  tokens: 0,
  endedAt: '2026-12-01T00:00:00.000Z',
});

/** A thread at every bound: a 100,000-character task and first and latest results of 256 KiB. */
function worstThread(n: number): AgentThread {
  const threadId = id('thread', 1_000 + n);
  const result = worst(Math.floor(maxTurnResultBytes / 6) - 2);
  return {
    id: threadId,
    rootId,
    parentId: rootId,
    conversationId: id('conversation', 1_000 + n),
    name: `agent-${n}`,
    path: `/root/agent-${n}`,
    depth: 1,
    status: 'idle',
    taskQueue: 'agents',
    task: worst(100_000),
    tools: ['*'],
    turnsStarted: 2,
    turnsCompleted: 2,
    latestTurn: outcome(2, result),
    firstTurn: outcome(1, result),
    createdAt: '2026-12-01T00:00:00.000Z',
    updatedAt: '2026-12-01T00:00:00.000Z',
  };
}

test('a listing of 1,000 threads at every bound fits one answer; each keeps its identity', () => {
  const threads = Array.from({ length: 1_000 }, (_, n) => worstThread(n));
  const fitted = fittedThreads(threads);
  expect(jsonBytes(fitted)).toBeLessThanOrEqual(maxAnswerBytes);
  expect(fitted.map((thread) => thread.id)).toEqual(threads.map((thread) => thread.id));
  expect(fitted[0]?.latestTurn?.result).toMatch(/clipped in an answer/);
  expect(fitted[0]?.task).toMatch(/clipped in the task in an answer/);
});

test('a wait on 1,000 threads with 256 KiB results fits one answer', () => {
  const outcomes = Array.from({ length: 1_000 }, (_, n) => ({
    threadId: id('thread', n + 2),
    status: 'idle' as const,
    latestTurn: worstThread(n).latestTurn!,
  }));
  const fitted = fittedWait({ timedOut: false, outcomes });
  expect(jsonBytes(fitted)).toBeLessThanOrEqual(maxAnswerBytes);
  expect(fitted.outcomes).toHaveLength(1_000);
});

test('an answer that fits is returned untouched; a larger one is clipped the least it must be', () => {
  const small = {
    ...worstThread(1),
    task: 'small',
    latestTurn: outcome(2, 'done'),
    firstTurn: outcome(1, 'ok'),
  };
  expect(fittedAnswer('load-thread', small)).toBe(small);
  expect(fittedThreads([small])).toEqual([small]);
  // One thread at every bound (~1.1 MB) fits as it is; three fit with their texts at 16 KiB each.
  const one = worstThread(1);
  expect(fittedAnswer('spawn', one)).toBe(one);
  const three = [worstThread(1), worstThread(2), worstThread(3)];
  const fitted = fittedAnswer('list-threads', three);
  expect(jsonBytes(fitted)).toBeLessThanOrEqual(maxAnswerBytes);
  expect(jsonBytes(fitted[0]?.latestTurn?.result)).toBeLessThanOrEqual(carriedResultBytes);
  expect(jsonBytes(fitted[0]?.latestTurn?.result)).toBeGreaterThan(carriedResultBytes - 100);
  expect(fittedAnswer('load-thread', null)).toBeNull();
  expect(fittedAnswer('charge', { remaining: 5 })).toEqual({ remaining: 5 });
});
