// SPEC S7.1, reduced for npm test: a busy run while its worker is SIGKILLed at seeded random moments and
// restarted. The log of every client operation and observation is judged by the checker. For more
// seeds: AGENTS_KIT_CRASH_SEED=<n> npx jest test/workflows/crash.test.ts
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { setTimeout as delay } from 'node:timers/promises';
import { checkRun } from '../helpers/checker';
import { runBusyRun, seededRandom } from '../helpers/busy-run';
import { testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

const seed = Number(process.env.AGENTS_KIT_CRASH_SEED ?? Date.now() % 1_000_000);
let connection: Connection;
let worker: WorkerProcess;

beforeAll(async () => {
  connection = await connectTest({ address: testServerAddress() });
});
afterAll(async () => {
  await worker?.kill();
  await connection?.close();
});

test(`a worker SIGKILLed 3 times during a busy run loses nothing and does nothing twice (seed ${seed})`, async () => {
  console.log(`crash test seed ${seed} (rerun with AGENTS_KIT_CRASH_SEED=${seed})`);
  const taskQueue = uniqueTaskQueue('crash');
  worker = new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath());
  await worker.start();
  const pause = seededRandom(seed ^ 0x5eed);
  const result = await runBusyRun({
    client: new Client({ connection }),
    taskQueue,
    seed,
    messages: 30,
    faults: 3,
    fault: async () => {
      await worker.kill();
      await delay(100 + Math.floor(pause() * 700));
      await worker.start();
    },
  });
  const problems = checkRun(result.log);
  const received = result.log.filter((entry) => entry.type === 'recv').length;
  console.log(
    `crash seed ${seed}: ${worker.kills} kills, ${result.log.length} log entries, ${received} notifications received, ${result.durationMs} ms`,
  );
  expect(problems).toEqual([]);
  expect(worker.kills).toBe(3);
  expect(result.log.some((entry) => entry.type === 'resolved')).toBe(true);
}, 120_000);
