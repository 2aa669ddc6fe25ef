import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { canonicalJson, RootRunState, RunSnapshot } from '../../domain/run-state';
import { jsonBytes } from '../../domain/bytes';
import { registryBudgetBytes } from '../../domain/run-snapshot';
import { SpawnRequest } from '../../domain/schemas';
import { kitErrorOf, newRun, now, scopeOf, spawn } from '../helpers/run-state';

// SPEC S7.3 / S7.5: a root run carries its registry through continue-as-new, and Temporal refuses an
// input over 2 MiB (the run would be terminated). Long tasks and turn results must not get it there.

const twoMiB = 2 * 1024 * 1024;
const long = (seed: string, length: number) => seed.repeat(Math.ceil(length / seed.length)).slice(0, length);

test('a small run’s snapshot carries every text as it was', () => {
  const state = newRun();
  const thread = spawn(state, state.rootId, { task: 'short task' });
  state.turnEnded(
    thread.id,
    { turn: 1, status: 'completed', result: 'short result', tokens: 0, endedAt: now },
    'idle',
  );
  const record = state.snapshot().records.find((entry) => entry.thread.id === thread.id)!;
  expect(record.thread.task).toBe('short task');
  expect(record.thread.latestTurn?.result).toBe('short result');
  expect(record.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
});

test('long results are clipped in the snapshot only as far as it needs to fit, with a note saying so', () => {
  const state = newRun({ maxConcurrent: 100, maxTotal: 100 });
  const threads = Array.from({ length: 40 }, (_, index) =>
    spawn(state, state.rootId, { task: long(`task ${index} `, 50_000) }),
  );
  for (const thread of threads) {
    for (const turn of [1, 2]) {
      state.turnStarted(thread.id, turn, now);
      state.turnEnded(
        thread.id,
        { turn, status: 'completed', result: long(`result ${turn} `, 100_000), tokens: 1, endedAt: now },
        'idle',
      );
    }
  }
  const snapshot = state.snapshot();
  expect(jsonBytes(snapshot.records)).toBeLessThanOrEqual(registryBudgetBytes);
  expect(jsonBytes(snapshot)).toBeLessThan(twoMiB);
  const record = snapshot.records.find((entry) => entry.thread.id === threads[0]!.id)!;
  expect(record.thread.firstTurn?.result).toMatch(
    /^result 1 result 1 .*… \[\d+ more characters clipped .* conversation has the full text\]$/,
  );
  expect(record.thread.latestTurn?.result?.startsWith('result 2 ')).toBe(true);
  expect(record.thread.task.startsWith('task 0 task 0')).toBe(true);
  // The live state keeps the full texts; a run restored from the snapshot works on and fits again.
  expect(state.load(scopeOf(state), threads[0]!.id)?.latestTurn?.result).toHaveLength(100_000);
  const next = new RootRunState(RunSnapshot.parse(snapshot));
  expect(next.counters.total).toBe(40);
  expect(jsonBytes(next.snapshot())).toBeLessThan(twoMiB);
});

test('spawns whose records could not fit even clipped are refused with QuotaExceeded, and change nothing', () => {
  const state = newRun({ maxConcurrent: 10_000, maxTotal: 10_000 });
  let admitted = 0;
  let refusal: ReturnType<typeof kitErrorOf> | undefined;
  // Texts do not matter here: the bound counts records as `fitRegistry` would clip them at most.
  while (!refusal && admitted < 10_000) {
    const before = JSON.stringify(state.counters);
    try {
      spawn(state, state.rootId, { task: `task ${admitted}`, instructions: long('rules ', 5_000) });
      admitted++;
    } catch (error) {
      refusal = kitErrorOf(() => {
        throw error;
      });
      expect(JSON.stringify(state.counters)).toBe(before);
    }
  }
  expect(refusal?.kind).toBe(ErrorKind.QuotaExceeded);
  expect(refusal?.details).toEqual({ limit: 'registryBytes', value: registryBudgetBytes });
  expect(admitted).toBeGreaterThan(1_000);
  expect(jsonBytes(state.snapshot())).toBeLessThan(twoMiB);
  // The bound holds for a run restored from its snapshot too.
  const next = new RootRunState(RunSnapshot.parse(state.snapshot()));
  expect(kitErrorOf(() => spawn(next, next.rootId, { task: 'after continue-as-new' })).kind).toBe(
    ErrorKind.QuotaExceeded,
  );
});

test('request ids recorded by earlier runs (JSON fingerprints) stay idempotent and still detect a different body', () => {
  const state = newRun();
  const requestId = `request_${randomUUID().replace(/-/g, '')}`;
  const thread = spawn(state, state.rootId, { task: 'legacy', requestId });
  const snapshot = state.snapshot();
  const legacy = {
    ...snapshot,
    requestIndex: {
      [requestId]: {
        fingerprint: canonicalJson({
          caller: state.rootId,
          remoteTarget: null,
          request: SpawnRequest.parse({ task: 'legacy' }),
        }),
        threadId: thread.id,
      },
    },
  };
  const restored = new RootRunState(RunSnapshot.parse(legacy));
  expect(spawn(restored, restored.rootId, { task: 'legacy', requestId }).id).toBe(thread.id);
  expect(kitErrorOf(() => spawn(restored, restored.rootId, { task: 'other', requestId })).kind).toBe(
    ErrorKind.Conflict,
  );
});
