// SPEC S7.2 on the production-shaped cluster (issue 20): the Temporal server process (all four services
// on PostgreSQL, 4 history shards) is killed (SIGKILL) and later stopped, and each time started again on
// the same database and ports during a busy run; the checker judges the log as in the crash test.
// Runs only with `npm run test:cluster` (it starts a cluster of its own).
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { runBusyRun } from '../helpers/busy-run';
import { checkRun } from '../helpers/checker';
import { startCluster, type Cluster } from '../helpers/cluster';
import { uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

const seed = Number(process.env.AGENTS_KIT_RESTART_SEED ?? Date.now() % 1_000_000);
let cluster: Cluster | undefined;
let connection: Connection | undefined;
let worker: WorkerProcess | undefined;

afterAll(async () => {
  await worker?.kill();
  await connection?.close();
  await cluster?.stop();
});

test(`a cluster server restarted twice mid-run loses nothing (seed ${seed})`, async () => {
  console.log(`cluster restart seed ${seed} (rerun with AGENTS_KIT_RESTART_SEED=${seed})`);
  cluster = await startCluster();
  connection = await connectTest({ address: cluster.address });
  const taskQueue = uniqueTaskQueue('cluster-restart');
  worker = new WorkerProcess(cluster.address, taskQueue, workflowBundlePath());
  await worker.start();
  let restarts = 0;
  let downMs = 0;
  const result = await runBusyRun({
    client: new Client({ connection }),
    taskQueue,
    seed,
    messages: 24,
    faults: 2,
    fault: async () => {
      const stopped = Date.now();
      await cluster!.restart(restarts === 0 ? 'SIGKILL' : 'SIGTERM');
      downMs += Date.now() - stopped;
      restarts++;
      if (!worker!.alive) await worker!.start();
    },
  });
  const problems = checkRun(result.log);
  console.log(
    `cluster restart seed ${seed}: ${restarts} restarts (${downMs} ms down), ${cluster.shards} shards, worker starts ${worker.starts}, ${result.log.length} log entries, ${result.durationMs} ms`,
  );
  expect(problems).toEqual([]);
  expect(restarts).toBe(2);
}, 400_000);
