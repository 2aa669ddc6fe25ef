// Issue 20 item 2 (SPEC S7.6): a rolling deploy while a tree is busy. Two workers of build A (the
// library's bundle) run the busy scenario. Mid-run two workers of build B start — B changes the workflow
// code behind a `patched` guard and changes an activity (test/deploy/build-b-interceptors.ts, the
// `word_count` of test/helpers/worker-child.ts) — then A's workers are drained (SIGTERM) and stopped, and
// later one of B's is SIGKILLed. The checker finds nothing lost or repeated; no workflow task failed; every
// run B started took the new path and every run A started kept the old one, also once B replayed it; the
// activity answers as A before the deploy and as B after it. Control: B's change without the guard
// cannot replay A's history.
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { temporal } from '@temporalio/proto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { checkRun } from '../helpers/checker';
import { runBusyRun, seededRandom } from '../helpers/busy-run';
import { bundleWith, testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';
import { failedTasks } from '../helpers/task-answers';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const seed = Number(process.env.AGENTS_KIT_CRASH_SEED ?? Date.now() % 1_000_000);
let connection: Connection;
const workers: WorkerProcess[] = [];
let buildB: string;
let unpatchedB: string;

beforeAll(async () => {
  connection = await connectTest({ address: testServerAddress() });
  const dir = mkdtempSync(join(tmpdir(), 'agents-kit-deploy-'));
  buildB = join(dir, 'build-b.js');
  writeFileSync(buildB, await bundleWith('build-b-interceptors'));
  unpatchedB = await bundleWith('build-b-unpatched-interceptors');
}, 180_000);
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await connection?.close();
});

/** Every run of every workflow on `taskQueue`, with its history's events. */
async function runsOn(client: Client, taskQueue: string) {
  const executions: WorkflowExecutionInfo[] = [];
  for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
    executions.push(execution);
  return Promise.all(
    executions.map(async (execution) => {
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      return { execution, history, events: history.events ?? [] };
    }),
  );
}

const firstIdentity = (events: HistoryEvent[]) =>
  events.find((event) => event.workflowTaskCompletedEventAttributes)?.workflowTaskCompletedEventAttributes
    ?.identity ?? '';
const identities = (events: HistoryEvent[]) =>
  events.flatMap((event) => event.workflowTaskCompletedEventAttributes?.identity ?? []);
const tookBuildB = (events: HistoryEvent[]) =>
  events.some((event) => event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.deployBuild);

test(`a rolling deploy from build A to build B mid-run: nothing lost, each run on its own path (seed ${seed})`, async () => {
  console.log(`rolling-deploy seed ${seed} (rerun with AGENTS_KIT_CRASH_SEED=${seed})`);
  const taskQueue = uniqueTaskQueue('deploy');
  const buildA = [0, 1].map(() => new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath()));
  const buildBWorkers = [0, 1].map(
    () => new WorkerProcess(testServerAddress(), taskQueue, buildB, { AGENTS_KIT_TEST_WORKER_BUILD: 'B' }),
  );
  workers.push(...buildA, ...buildBWorkers);
  await Promise.all(buildA.map((worker) => worker.start()));
  const pids = { A: new Set<string>(), B: new Set<string>() };
  const note = (build: 'A' | 'B', worker: WorkerProcess) => pids[build].add(String(worker.pid));
  buildA.forEach((worker) => note('A', worker));
  const pause = seededRandom(seed ^ 0xde);
  const drained: (number | null)[] = [];
  const client = new Client({ connection });
  const result = await runBusyRun({
    client,
    taskQueue,
    seed,
    messages: 30,
    faults: 2,
    counters: true,
    fault: async (index) => {
      if (index === 0) {
        // The deploy: B comes up beside A, then A's workers are drained one after the other.
        for (const worker of buildBWorkers) {
          await worker.start();
          note('B', worker);
        }
        for (const worker of buildA) drained.push(await worker.drain());
        return;
      }
      const victim = buildBWorkers[Math.floor(pause() * 2)]!;
      await victim.kill();
      await delay(100 + Math.floor(pause() * 700));
      await victim.start();
      note('B', victim);
    },
  });

  expect(checkRun(result.log)).toEqual([]);
  // A's workers left cleanly: the SDK's shutdown finished what they held.
  expect(drained).toEqual([0, 0]);
  // The changed activity: A's word_count before the deploy, B's after it.
  expect(result.counted.map((counted) => counted.name)).toEqual(['counter-before', 'counter-after']);
  expect(result.counted[0]!.answer).toContain('word_count → 6');
  expect(result.counted[1]!.answer).toContain('"counter":"v2"');

  const runs = await runsOn(client, taskQueue);
  const buildOf = (identity: string) =>
    pids.A.has(identity.split('@')[0]!) ? 'A' : pids.B.has(identity.split('@')[0]!) ? 'B' : '?';
  // No workflow task failed anywhere: B replayed every history A had written. (A task the server refused
  // because new events arrived as it completed, UnhandledCommand, is retried with them: not a failure.)
  const failed = runs.flatMap(({ execution, events }) =>
    failedTasks(events).map((message) => `${execution.workflowId}: ${message}`),
  );
  expect(failed).toEqual([]);
  const startedBy = { A: 0, B: 0, replayedByB: 0 };
  for (const { events } of runs) {
    const build = buildOf(firstIdentity(events));
    expect(build).not.toBe('?');
    // Each run keeps the path of the build that started it.
    expect({ build, newPath: tookBuildB(events) }).toEqual({ build, newPath: build === 'B' });
    startedBy[build as 'A' | 'B']++;
    if (build === 'A' && identities(events).some((identity) => buildOf(identity) === 'B'))
      startedBy.replayedByB++;
  }
  console.log(
    `rolling-deploy seed ${seed}: ${runs.length} runs (${startedBy.A} started on A, ${startedBy.replayedByB} of them carried on by B, ${startedBy.B} started on B), ${result.log.length} log entries, ${result.durationMs} ms`,
  );
  expect(startedBy.A).toBeGreaterThan(0);
  expect(startedBy.B).toBeGreaterThan(0);
  expect(startedBy.replayedByB).toBeGreaterThan(0);

  // The control: A's first root run replays on B, and not on B without the patch guard.
  const rootRun = runs
    .filter(({ execution }) => execution.workflowId === result.rootThreadId)
    .sort((a, b) => a.execution.startTime.getTime() - b.execution.startTime.getTime())[0]!;
  expect(buildOf(firstIdentity(rootRun.events))).toBe('A');
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: buildB } },
    rootRun.history,
    result.rootThreadId,
  );
  await expect(
    Worker.runReplayHistory({ workflowBundle: { code: unpatchedB } }, rootRun.history, result.rootThreadId),
  ).rejects.toBeInstanceOf(DeterminismViolationError);
}, 300_000);
