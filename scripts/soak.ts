// `npm run soak` (issue 20, SPEC S7.1/S7.2 at volume; not part of npm test): the crash scenario of
// test/workflows/crash.test.ts across many seeds, each with SIGKILLs of its worker, and server restarts
// spread over the seeds, on the dev server or the production-shaped cluster. Prints a table (seed,
// kills, restarts, operations, duration, verdict) and writes it to bench/results/soak-<time>.json.
//
//   npm run soak -- [--seeds 100] [--first 1] [--restarts 10] [--kills 3] [--server dev|cluster]
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { checkRun } from '../test/helpers/checker';
import { runBusyRun, seededRandom } from '../test/helpers/busy-run';
import { startCluster } from '../test/helpers/cluster';
import { WorkerProcess } from '../test/helpers/worker-process';
import { bundleOptions } from '../workers/create-worker';
import { startDevServer } from '../workers/dev-server';

interface Row {
  seed: number;
  kills: number;
  restarts: number;
  operations: number;
  durationMs: number;
  verdict: string;
}

interface Server {
  address: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '100' },
    first: { type: 'string', default: '1' },
    restarts: { type: 'string', default: '10' },
    kills: { type: 'string', default: '3' },
    server: { type: 'string', default: 'dev' },
  },
});
const seeds = Number(values.seeds);
const first = Number(values.first);
const restarts = Number(values.restarts);
const kills = Number(values.kills);
const kind = values.server;
if (![seeds, first, restarts, kills].every((value) => Number.isInteger(value) && value >= 0) || seeds < 1)
  throw new Error('--seeds, --first, --restarts and --kills take whole numbers (--seeds at least 1)');
if (kind !== 'dev' && kind !== 'cluster') throw new Error('--server is dev or cluster');

/** The dev server on a SQLite file (restarted on the same file and port), or a cluster. */
async function startServer(dir: string): Promise<Server> {
  if (kind === 'cluster') {
    const cluster = await startCluster();
    return {
      address: cluster.address,
      restart: () => cluster.restart('SIGKILL'),
      stop: () => cluster.stop(),
    };
  }
  const dbFile = join(dir, 'soak.sqlite');
  const start = (port?: number) =>
    startDevServer({
      dbFile,
      headless: true,
      searchAttributes: searchAttributeRegistrations,
      ...(port ? { port } : {}),
    });
  let server = await start();
  const port = Number(server.address.split(':')[1]);
  return {
    address: server.address,
    async restart() {
      process.kill(server.pid, 'SIGKILL');
      await server.exited;
      server = await start(port);
    },
    stop: () => server.stop(),
  };
}

/** Which seeds restart the server: `restarts` of them, spread evenly. */
const restartsAt = new Set(
  Array.from({ length: Math.min(restarts, seeds) }, (_, n) =>
    Math.floor(((n + 0.5) * seeds) / Math.min(restarts, seeds)),
  ),
);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'agents-kit-soak-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, (await bundleWorkflowCode({ ...bundleOptions, logger: quiet })).code);
  const server = await startServer(dir);
  const connection = await Connection.connect({
    address: server.address,
    interceptors: [grpcRetryInterceptor()],
  });
  const rows: Row[] = [];
  const started = Date.now();
  console.log(
    `soak: ${seeds} seeds from ${first}, ${kills} worker kills each, ${restartsAt.size} server restarts, on the ${kind} server`,
  );
  console.log('seed      kills  restarts  operations  duration  verdict');
  try {
    for (let n = 0; n < seeds; n++) {
      const seed = first + n;
      const restartHere = restartsAt.has(n);
      const taskQueue = `soak-${seed}-${Date.now()}`;
      const worker = new WorkerProcess(server.address, taskQueue, bundlePath);
      await worker.start();
      const pause = seededRandom(seed ^ 0x5eed);
      let restarted = 0;
      const row: Row = { seed, kills: 0, restarts: 0, operations: 0, durationMs: 0, verdict: '' };
      try {
        const result = await runBusyRun({
          client: new Client({ connection }),
          taskQueue,
          seed,
          messages: 30,
          faults: kills + (restartHere ? 1 : 0),
          fault: async (index) => {
            if (restartHere && index === 1) {
              await server.restart();
              restarted++;
              if (!worker.alive) await worker.start();
              return;
            }
            await worker.kill();
            await delay(100 + Math.floor(pause() * 700));
            await worker.start();
          },
        });
        const problems = checkRun(result.log);
        Object.assign(row, {
          operations: result.log.length,
          durationMs: result.durationMs,
          verdict:
            problems.length === 0 ? 'ok' : `${problems.length} problems: ${problems.slice(0, 3).join('; ')}`,
        });
      } catch (error) {
        row.verdict = `failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300);
      } finally {
        row.kills = worker.kills;
        row.restarts = restarted;
        await worker.kill();
      }
      rows.push(row);
      console.log(
        `${String(seed).padEnd(9)} ${String(row.kills).padStart(5)}  ${String(row.restarts).padStart(8)}  ${String(row.operations).padStart(10)}  ${`${(row.durationMs / 1000).toFixed(1)} s`.padStart(8)}  ${row.verdict}`,
      );
    }
  } finally {
    await connection.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const bad = rows.filter((row) => row.verdict !== 'ok');
  const summary = {
    server: kind,
    seeds: rows.length,
    kills: rows.reduce((sum, row) => sum + row.kills, 0),
    restarts: rows.reduce((sum, row) => sum + row.restarts, 0),
    operations: rows.reduce((sum, row) => sum + row.operations, 0),
    failed: bad.length,
    durationMs: Date.now() - started,
  };
  console.log(
    `soak: ${summary.seeds} seeds, ${summary.kills} kills, ${summary.restarts} restarts, ${summary.operations} operations, ${bad.length} not ok, ${(summary.durationMs / 60_000).toFixed(1)} min`,
  );
  const results = join(__dirname, '..', 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const file = join(results, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ summary, rows }, null, 2)}\n`);
  console.log(`written to ${file}`);
  process.exitCode = bad.length === 0 ? 0 : 1;
}

const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
