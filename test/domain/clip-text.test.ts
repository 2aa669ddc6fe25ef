import { clipText } from '../../domain/run-snapshot';
import { ThreadWatch } from '../../workflows/thread-watch';
import type { AgentThread } from '../../domain/schemas';

test('clipText keeps short texts, cuts long ones with a note, and is idempotent', () => {
  expect(clipText('short', 10)).toBe('short');
  const clipped = clipText('x'.repeat(5_000), 1_000);
  expect(clipped).toMatch(
    /^x{1000}… \[4000 more characters clipped in the root run's registry .*full text\]$/,
  );
  expect(clipText(clipped, 1_000)).toBe(clipped);
  expect(clipText(clipped, 500).startsWith('x'.repeat(500) + '… [')).toBe(true);
});

test('a thread’s change log stays small in its snapshot however long its turn results are', () => {
  const watch = new ThreadWatch();
  const thread = (turn: number): AgentThread => ({
    id: 'thread_00000000000000000000000000000001',
    rootId: 'thread_00000000000000000000000000000000',
    parentId: 'thread_00000000000000000000000000000000',
    conversationId: 'conversation_00000000000000000000000000000001',
    name: 'writer',
    path: '/root/writer',
    depth: 1,
    status: turn % 2 ? 'running' : 'idle',
    taskQueue: 'q',
    task: 'write',
    tools: [],
    turnsStarted: Math.ceil(turn / 2),
    turnsCompleted: Math.floor(turn / 2),
    latestTurn: {
      turn: Math.max(1, Math.floor(turn / 2)),
      status: 'completed',
      result: `${turn} ${'w'.repeat(100_000)}`,
      tokens: 0,
      endedAt: 'now',
    },
    createdAt: 'then',
    updatedAt: 'now',
  });
  for (let turn = 1; turn <= 200; turn++) watch.record(thread(turn));
  const snapshot = watch.snapshot();
  expect(snapshot.changes).toHaveLength(64);
  expect(JSON.stringify(snapshot).length).toBeLessThan(256 * 1024);
  expect(snapshot.changes.at(-1)?.latestTurn?.result).toHaveLength(100_004);
  expect(snapshot.changes.at(-2)?.latestTurn?.result).toMatch(/clipped in an older change/);
  // A restored log (earlier runs kept every result whole) is clipped too, the latest change excepted.
  const restored = new ThreadWatch({
    changes: snapshot.changes.map((change) => ({
      ...change,
      latestTurn: { ...change.latestTurn!, result: 'z'.repeat(50_000) },
    })),
  });
  expect(JSON.stringify(restored.snapshot()).length).toBeLessThan(256 * 1024);
});
