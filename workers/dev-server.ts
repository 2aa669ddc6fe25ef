import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ErrorKind, KitError } from '../domain/errors';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { ensureTemporalBinary } from './temporal-binary';

/**
 * Where dev servers keep their SQLite files unless told otherwise: `.agents-kit/` under the current
 * working directory (the user's project), never inside the installed package.
 */
export const defaultDataDir = (): string => resolve(process.cwd(), '.agents-kit');

/**
 * Bytes of update arguments a workflow may have in flight (admitted, not yet accepted or rejected);
 * Temporal's default is 20 MB. Temporal's update protocol sends every update's arguments back in the
 * workflow task that accepts or rejects it, and that task's answer must stay under 4 MiB, or it fails
 * (GRPC message too large) and the updates in it fail for their callers. Our own updates take at most
 * 160 KiB of arguments (`maxUpdateBytes`), ten in flight: 1.64 MB. Beyond this bound the server refuses
 * the update with RESOURCE_EXHAUSTED (clients retry it a second later); so two raw-client updates of
 * nearly 2 MiB each can no longer fail a task together. With `taskSendBytes` (1.9 MB) it leaves ~590 kB
 * of a task's answer for the rest (a transcript of at most 144 KiB, upserts, timers).
 */
export const maxInFlightUpdatePayloads = 1_700_000;

/**
 * Dynamic config every dev server of ours gets (the compose stack's file has the same values).
 * - Agents rely on updates and on search attributes being visible right after an upsert.
 * - The server reads its queue of internal tasks (deliver a workflow's signal to another workflow,
 *   dispatch a workflow task, start a child) at most `transferProcessorMaxPollRPS` times a second per
 *   history shard; the default 20 adds up to 50 ms to every such hop once more than 20 a second happen
 *   on a shard, and the dev server has a single shard (BENCHMARKS.md).
 * - Update arguments in flight are bounded by {@link maxInFlightUpdatePayloads}.
 */
export const devServerSettings: Readonly<Record<string, unknown>> = {
  'frontend.enableUpdateWorkflowExecution': true,
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'history.transferProcessorMaxPollRPS': 1000,
  'history.maxInFlightUpdatePayloads': maxInFlightUpdatePayloads,
};

/**
 * SQLite settings of every dev server of ours. WAL with `synchronous=NORMAL` writes each commit to the
 * log without an fsync (checkpoints still sync): a commit survives the server process being killed,
 * which is what the crash and restart tests do, and can be lost only to a power cut or an OS crash —
 * acceptable for a dev server. The fsync per commit was the dev server's bottleneck (RELIABILITY.md).
 */
export const devServerPragmas: readonly string[] = ['journal_mode=WAL', 'synchronous=NORMAL'];

/** How to start a dev server; every field is optional. */
export interface DevServerOptions {
  /** The SQLite file (kept between runs). Default: `.agents-kit/temporal-<port>.sqlite` under the cwd. */
  dbFile?: string | undefined;
  /** The frontend port (default: a free one). */
  port?: number | undefined;
  /** The Web UI port (default: a free one). */
  uiPort?: number | undefined;
  /** No Web UI. */
  headless?: boolean | undefined;
  namespace?: string | undefined;
  /** Search attributes to register (default: agents-kit's own, which its workflows set). */
  searchAttributes?: Record<string, string> | undefined;
  /** The server's log level (default `error`). */
  logLevel?: string | undefined;
  /** `false` lets the server's stdout through. */
  quiet?: boolean | undefined;
  /** Overrides of {@link devServerSettings} (e.g. the server's own default, for a comparison). */
  dynamicConfig?: Record<string, unknown> | undefined;
  /** SQLite pragmas instead of {@link devServerPragmas}. */
  sqlitePragmas?: readonly string[] | undefined;
  /** The Web UI's codec server (`--ui-codec-endpoint`). */
  uiCodecEndpoint?: string | undefined;
}

/** A running dev server. */
export interface DevServer {
  binary: string;
  /** `127.0.0.1:<port>`, for `Connection.connect({ address })`. */
  address: string;
  namespace: string;
  dbFile: string;
  pid: number;
  /** `http://127.0.0.1:<uiPort>`, unless headless. */
  uiAddress: string | undefined;
  /** Stops the server (SIGTERM, SIGKILL after 10 s) and resolves once it has exited. */
  stop(): Promise<void>;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const execFileAsync = promisify(execFile);

/**
 * Starts the real Temporal server (`temporal server start-dev`: SQLite persistence, Web UI, agents-kit's
 * search attributes) and resolves once it answers a health check. The binary is found or built first
 * (`ensureTemporalBinary`). A reaper process stops the server if this process dies without stopping it
 * (SIGKILL included). Use it for local development and for tests of your own agents. A `port` or
 * `uiPort` that something already listens on (another Temporal server, say) is a `Conflict` KitError
 * naming the port (its `details`: `{ port, option }`), and nothing is left running.
 *
 * @example
 * // jest globalSetup / beforeAll
 * const server = await startDevServer({ headless: true });
 * const connection = await Connection.connect({ address: server.address });
 * // … afterAll: await server.stop();
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  // A free port can be taken by someone else before the server binds it. When that port is one of ours
  // (not one the caller fixed), try again on fresh ones.
  for (let attempt = 0; ; attempt++) {
    try {
      return await startDevServerOnce(options);
    } catch (error) {
      const conflict = portConflictOf(error);
      const fixed = conflict?.option !== undefined && options[conflict.option] !== undefined;
      if (attempt >= 2 || conflict === undefined || fixed) throw error;
      process.stderr.write(`[temporal] ${(error as Error).message}; starting it again on other ports\n`);
    }
  }
}

/** The dev server's options that fix a port. */
export type PortOption = 'port' | 'uiPort';

/** What a port conflict's KitError carries: the port, and the option that fixed it (none: one of ours). */
export interface PortConflict {
  port: number;
  option: PortOption | undefined;
}

function portConflict(port: number, option: PortOption | undefined): KitError {
  const what = option === 'uiPort' ? 'the Web UI port' : option === 'port' ? 'the Temporal port' : 'port';
  const details: PortConflict = { port, option };
  return new KitError(
    ErrorKind.Conflict,
    `${what} ${port} is already in use on 127.0.0.1 (another Temporal server?): stop what listens there or choose another port`,
    details,
  );
}

/** The port and option of a {@link startDevServer} port conflict; undefined for any other error. */
export function portConflictOf(error: unknown): PortConflict | undefined {
  if (!KitError.is(error) || error.kind !== ErrorKind.Conflict) return undefined;
  const details = error.details as Partial<PortConflict> | undefined;
  return typeof details?.port === 'number' ? { port: details.port, option: details.option } : undefined;
}

/** Whether something listens on 127.0.0.1:`port`, where the dev server would bind it. */
function portInUse(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.unref();
    // Any other refusal (a privileged port, say) is the server's to report when it tries.
    probe.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'EADDRINUSE'));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(false)));
  });
}

/** `count` ports that were free a moment ago, distinct from each other and from `taken`. */
async function freePorts(count: number, taken: readonly number[]): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort();
    if (!taken.includes(port) && !ports.includes(port)) ports.push(port);
  }
  return ports;
}

/** The ports a dev server listens on. */
interface ServerPorts {
  port: number;
  uiPort: number;
  httpPort: number;
  metricsPort: number;
}

function serverArguments(options: DevServerOptions, ports: ServerPorts, dbFile: string) {
  const { port, uiPort, httpPort, metricsPort } = ports;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--namespace',
    options.namespace ?? 'default',
    '--db-filename',
    dbFile,
    ...(options.sqlitePragmas ?? devServerPragmas).flatMap((pragma) => ['--sqlite-pragma', pragma]),
    '--log-level',
    options.logLevel ?? 'error',
  ];
  for (const [key, value] of Object.entries({ ...devServerSettings, ...options.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (options.uiCodecEndpoint) args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  for (const [name, type] of Object.entries(options.searchAttributes ?? searchAttributeRegistrations)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  return args;
}

/**
 * The reaper: a detached plain-Node process that stops the server once its owner is gone. Its code is
 * passed with `-e`, so it runs the same from sources and from the installed package.
 */
const reaperSource = `
const [ownerPid, serverPid] = process.argv.slice(1).map(Number);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const tick = () => {
  if (!alive(serverPid)) return;
  if (alive(ownerPid)) return void setTimeout(tick, 500);
  try { process.kill(serverPid, 'SIGTERM'); } catch {}
  setTimeout(() => { if (alive(serverPid)) process.kill(serverPid, 'SIGKILL'); }, 10000);
};
tick();`;

async function startDevServerOnce(options: DevServerOptions): Promise<DevServer> {
  const port = options.port ?? (await freePort());
  const uiPort = options.uiPort ?? (await freePorts(1, [port]))[0]!;
  const optionOf = (taken: number): PortOption | undefined =>
    taken === port ? 'port' : taken === uiPort && !options.headless ? 'uiPort' : undefined;
  // Checked before anything starts: the health check below would otherwise be answered by whatever
  // Temporal server holds the port, while ours exits for want of it.
  for (const wanted of options.headless ? [port] : [port, uiPort]) {
    if (await portInUse(wanted)) throw portConflict(wanted, optionOf(wanted));
  }
  const binary = await ensureTemporalBinary();
  const namespace = options.namespace ?? 'default';
  const dbFile = resolve(options.dbFile ?? join(defaultDataDir(), `temporal-${port}.sqlite`));
  mkdirSync(dirname(dbFile), { recursive: true });
  const [httpPort, metricsPort] = await freePorts(2, [port, uiPort]);
  const ports = { port, uiPort, httpPort: httpPort!, metricsPort: metricsPort! };
  const server = spawn(binary, serverArguments(options, ports, dbFile), {
    stdio: ['ignore', options.quiet === false ? 'inherit' : 'ignore', 'pipe'],
  });
  // The start of stderr (where a failure's cause is) and its end.
  let stderrHead = '';
  let stderr = '';
  server.stderr.on('data', (chunk: Buffer) => {
    if (stderrHead.length < 4000) stderrHead = (stderrHead + chunk.toString()).slice(0, 4000);
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
    server.on('exit', (code, signal) => done({ code, signal })),
  );
  const closed = new Promise<void>((done) => server.on('close', () => done()));
  const reaper = spawn(process.execPath, ['-e', reaperSource, String(process.pid), String(server.pid)], {
    detached: true,
    stdio: 'ignore',
  });
  reaper.unref();

  const address = `127.0.0.1:${port}`;
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM');
      const killer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    try {
      if (reaper.pid) process.kill(reaper.pid, 'SIGTERM');
    } catch {
      // the reaper already left
    }
  };
  const exitFailure = async (): Promise<Error> => {
    await closed; // all of stderr read
    const taken = /:(\d+): bind: address already in use/.exec(stderrHead + stderr)?.[1];
    if (taken) return portConflict(Number(taken), optionOf(Number(taken)));
    // The cause is near the top (a panic's stack follows it); show that and the last lines.
    const cause = stderrHead.split('\n').filter((line) => /panic|fatal|error|in use/i.test(line));
    const last = stderr.trim().split('\n').slice(-2);
    return new KitError(
      ErrorKind.Integration,
      `temporal server start-dev exited before answering: ${[...cause.slice(0, 3), ...last].join(' | ')}`,
    );
  };

  try {
    await untilServing(binary, ports, server, exited);
  } catch (error) {
    const exitedEarly = server.exitCode !== null || server.signalCode !== null;
    await stop();
    throw exitedEarly ? await exitFailure() : error;
  }
  return {
    binary,
    address,
    namespace,
    dbFile,
    pid: server.pid!,
    uiAddress: options.headless ? undefined : `http://127.0.0.1:${uiPort}`,
    stop,
    exited,
  };
}

/**
 * Resolves once the server answers a health check on its gRPC port and its HTTP API on its own fresh
 * port, while it still runs; fails as soon as it exits. The gRPC port alone could be answered by
 * another server that took it after the check above (ours then exits), the fresh port only by ours.
 */
async function untilServing(
  binary: string,
  ports: ServerPorts,
  server: ChildProcess,
  exited: Promise<unknown>,
): Promise<void> {
  const address = `127.0.0.1:${ports.port}`;
  const running = () => server.exitCode === null && server.signalCode === null;
  const answers = async () =>
    (await Promise.all([answersHealthCheck(binary, address), answersHttp(ports.httpPort)])).every(Boolean);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const serving = await Promise.race([answers(), exited.then(() => false)]);
    if (!running()) throw new KitError(ErrorKind.Integration, 'temporal server start-dev exited');
    if (serving) return;
    if (Date.now() > deadline) {
      throw new KitError(
        ErrorKind.Timeout,
        `temporal dev server on ${address} did not become healthy within 60 s`,
      );
    }
    await Promise.race([sleep(200), exited]);
  }
}

/** Whether the Temporal server at `address` says it is serving. */
async function answersHealthCheck(binary: string, address: string): Promise<boolean> {
  try {
    const health = await execFileAsync(binary, ['operator', 'cluster', 'health', '--address', address], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    return /SERVING/.test(health.stdout);
  } catch {
    return false;
  }
}

/** Whether Temporal's HTTP API answers on `httpPort`. */
function answersHttp(httpPort: number): Promise<boolean> {
  return new Promise((done) => {
    // `agent: false`: a connection of its own, closed after the answer, so none lingers once ready.
    const request = get(
      { host: '127.0.0.1', port: httpPort, path: '/api/v1/system-info', agent: false, timeout: 10_000 },
      (response) => {
        response.resume();
        done(response.statusCode === 200);
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => done(false));
  });
}
