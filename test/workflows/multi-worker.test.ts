// Issue 20 item 3 (SPEC S7.1 with several workers): three worker processes share one task queue during
// a busy run; the one that last completed the root's workflow task (so holds it in its sticky cache) is
// SIGKILLed four times. The root's next tasks fall back from its dead worker's sticky queue to the shared
// queue (a schedule-to-start timeout, or the server finding no sticky poller), where the others carry
// on; the checker finds nothing lost or repeated.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { setTimeout as delay } from 'node:timers/promises';
import { checkRun } from '../helpers/checker';
import { runBusyRun, seededRandom } from '../helpers/busy-run';
import { testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

const seed = Number(process.env.AGENTS_KIT_CRASH_SEED ?? Date.now() % 1_000_000);
let connection: Connection;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  connection = await connectTest({ address: testServerAddress() });
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await connection?.close();
});

/** Every run of a workflow (it continues as new), oldest first, with its history's events. */
async function historiesOf(client: Client, workflowId: string) {
  const runs = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(execution);
  runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return Promise.all(
    runs.map(
      async (run) => (await client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? [],
    ),
  );
}

test(`three workers on one queue, the root's sticky worker SIGKILLed 4 times: nothing lost (seed ${seed})`, async () => {
  console.log(`multi-worker seed ${seed} (rerun with AGENTS_KIT_CRASH_SEED=${seed})`);
  const taskQueue = uniqueTaskQueue('workers');
  for (let index = 0; index < 3; index++)
    workers.push(new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath()));
  await Promise.all(workers.map((worker) => worker.start()));
  const client = new Client({ connection });
  const pause = seededRandom(seed ^ 0x3a);
  const killedIdentities: string[] = [];
  const result = await runBusyRun({
    client,
    taskQueue,
    seed,
    messages: 30,
    faults: 4,
    fault: async (_index, rootThreadId) => {
      // The worker that completed the root's latest workflow task: its sticky cache holds the root.
      const events = (await client.workflow.getHandle(rootThreadId).fetchHistory()).events ?? [];
      const completed = events.filter((event) => event.workflowTaskCompletedEventAttributes);
      const identity = completed.at(-1)?.workflowTaskCompletedEventAttributes?.identity ?? undefined;
      const pid = Number(identity?.split('@')[0]);
      const sticky = workers.find((worker) => worker.pid === pid) ?? workers[0]!;
      killedIdentities.push(identity ?? '(none)');
      await sticky.kill();
      await delay(100 + Math.floor(pause() * 700));
      await sticky.start();
    },
  });
  const problems = checkRun(result.log);
  const histories = await historiesOf(client, result.rootThreadId);
  const events = histories.flat();
  const identities = new Set(
    events.flatMap((event) => event.workflowTaskCompletedEventAttributes?.identity ?? []),
  );
  const stickyTimeouts = events.filter(
    (event) =>
      event.workflowTaskTimedOutEventAttributes &&
      event.workflowTaskTimedOutEventAttributes.timeoutType === 2,
  ).length;
  const kills = workers.reduce((sum, worker) => sum + worker.kills, 0);
  console.log(
    `multi-worker seed ${seed}: ${kills} kills of the root's sticky worker (${killedIdentities.join(', ')}), ${identities.size} worker identities completed root tasks over ${histories.length} runs, ${stickyTimeouts} sticky schedule-to-start timeouts, ${result.log.length} log entries, ${result.durationMs} ms`,
  );
  expect(problems).toEqual([]);
  expect(kills).toBe(4);
  // The root moved between workers: killed ones were replaced by others on the shared queue.
  expect(identities.size).toBeGreaterThanOrEqual(2);
  expect(killedIdentities.every((identity) => identity !== '(none)')).toBe(true);
}, 240_000);
