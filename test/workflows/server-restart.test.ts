// SPEC S7.2, reduced for npm test: the dev server (SQLite database file) is killed (SIGKILL) and, later,
// stopped, and each time restarted on the same file and port during a busy run; the checker judges the
// log as in the crash test.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { join } from 'node:path';
import { searchAttributeRegistrations } from '../../domain/search-attributes';
import { startDevServer, type DevServer } from '../../workers/dev-server';
import { runBusyRun } from '../helpers/busy-run';
import { checkRun } from '../helpers/checker';
import { uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

const seed = Number(process.env.AGENTS_KIT_RESTART_SEED ?? Date.now() % 1_000_000);
let server: DevServer | undefined;
let connection: Connection | undefined;
let worker: WorkerProcess | undefined;

afterAll(async () => {
  await worker?.kill();
  await connection?.close();
  await server?.stop();
});

test(`a dev server restarted twice on its database file mid-run loses nothing (seed ${seed})`, async () => {
  console.log(`server restart seed ${seed} (rerun with AGENTS_KIT_RESTART_SEED=${seed})`);
  const dbFile = join(process.env.AGENTS_KIT_TEST_DIR ?? '.data', `restart-${process.pid}.sqlite`);
  const start = (port?: number) =>
    startDevServer({
      dbFile,
      headless: true,
      searchAttributes: searchAttributeRegistrations,
      ...(port ? { port } : {}),
    });
  server = await start();
  const port = Number(server.address.split(':')[1]);
  connection = await connectTest({ address: server.address });
  const taskQueue = uniqueTaskQueue('restart');
  worker = new WorkerProcess(server.address, taskQueue, workflowBundlePath());
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
      // The first restart follows a crash (SIGKILL: the SQLite log is written but not synced), the
      // second a clean stop.
      if (restarts === 0) {
        process.kill(server!.pid, 'SIGKILL');
        await server!.exited;
      }
      await server!.stop();
      server = await start(port);
      downMs += Date.now() - stopped;
      restarts++;
      // The worker reconnects by itself; should its process have given up, a new one takes over.
      if (!worker!.alive) await worker!.start();
    },
  });
  const problems = checkRun(result.log);
  console.log(
    `restart seed ${seed}: ${restarts} restarts (${downMs} ms down), worker starts ${worker.starts}, ${result.log.length} log entries, ${result.durationMs} ms`,
  );
  expect(problems).toEqual([]);
  expect(restarts).toBe(2);
}, 150_000);
