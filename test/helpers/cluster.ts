// A production-shaped Temporal on one machine (issue 20, SPEC S8.4): the real server built from its Go
// module, PostgreSQL as its persistence and visibility (schema set up with the server's own SQL tool),
// several history shards, the frontend, history, matching and worker services, agents-kit's dynamic
// config and search attributes. `npm run test:cluster` runs the workflow suite against it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectTest } from './connection';
import { searchAttributeRegistrations } from '../../domain/search-attributes';
import { devServerSettings } from '../../workers/dev-server';
import { ensureGoBinary, ensureTemporalBinary } from '../../workers/temporal-binary';
import { startPostgres, type Postgres } from './postgres';

/** The server release the CLI embeds (ENVIRONMENT.md), so both run the same server code. */
export const serverVersion = 'v1.29.1';
const serverModule = `go.temporal.io/server/cmd/server@${serverVersion}`;
const sqlToolModule = `go.temporal.io/server/cmd/tools/sql@${serverVersion}`;

const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface ClusterOptions {
  /** History shards (4 by default). */
  shards?: number;
  namespace?: string;
}

/** A running cluster: the same shape as a dev server for the tests (`address`, `stop`). */
export interface Cluster {
  address: string;
  namespace: string;
  shards: number;
  /** Milliseconds from nothing to a namespace that answers (binaries already built). */
  startupMs: number;
  /** The server process (all four services); PostgreSQL is a separate process. */
  pid: number;
  /** Kills the server process (SIGKILL) and starts it again on the same database and ports. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** Builds what is missing, starts PostgreSQL and the server, and resolves once the namespace answers. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const started = Date.now();
  const shards = options.shards ?? 4;
  const namespace = options.namespace ?? 'default';
  const server = await ensureGoBinary(serverModule, 'server', `the Temporal server ${serverVersion}`);
  const sqlTool = await ensureGoBinary(sqlToolModule, 'sql', `the Temporal SQL schema tool ${serverVersion}`);
  const cli = await ensureTemporalBinary();
  const root = mkdtempSync(join(tmpdir(), 'agents-kit-cluster-'));
  const postgres = await startPostgres(join(root, 'pg'));
  try {
    setUpSchemas(sqlTool, postgres);
    const ports = await distinctPorts(9);
    const address = `127.0.0.1:${ports[0]}`;
    writeConfig(root, postgres, shards, ports);
    let process_: ChildProcess | undefined;
    let exited: Promise<void> = Promise.resolve();
    const launch = async () => {
      const child = spawn(
        server,
        ['--root', root, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      // Its log (errors only) goes to stdout; the last of both is kept for a failure's message.
      let stderr = '';
      const keep = (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000));
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      exited = new Promise((done) => child.once('exit', () => done()));
      process_ = child;
      await untilServing(address, child, () => stderr);
    };
    await launch();
    createNamespace(cli, address, namespace);
    await untilNamespace(address, namespace);
    const elapsed = Date.now() - started;
    log(
      `Temporal ${serverVersion} on ${address}: ${shards} history shards, PostgreSQL ${postgres.version} on port ${postgres.port}, up in ${(elapsed / 1000).toFixed(1)} s`,
    );
    const kill = async (signal: NodeJS.Signals) => {
      process_?.kill(signal);
      const timer = setTimeout(() => process_?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    };
    // A test process that exits without stopping it (a crash, Ctrl-C) leaves nothing running.
    const stopOnExit = () => {
      process_?.kill('SIGKILL');
      void postgres.stop();
    };
    process.once('exit', stopOnExit);
    return {
      address,
      namespace,
      shards,
      startupMs: elapsed,
      get pid() {
        return process_!.pid!;
      },
      async restart(signal = 'SIGKILL') {
        await kill(signal);
        await launch();
        await untilNamespace(address, namespace);
      },
      async stop() {
        process.off('exit', stopOnExit);
        await kill('SIGTERM');
        await postgres.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await postgres.stop();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Free ports below 32768: the server keeps membership ports in a SQL `smallint`, so the kernel's
 * ephemeral range (where port 0 lands) does not fit.
 */
async function distinctPorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!ports.has(port) && (await isFree(port))) ports.add(port);
  }
  return [...ports];
}

function isFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/** The server's own schema tool creates both databases and applies every versioned schema. */
function setUpSchemas(sqlTool: string, postgres: Postgres) {
  const schemas = join(moduleDir(), 'schema', 'postgresql', 'v12');
  for (const [database, folder] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const base = [
      '--ep',
      '127.0.0.1',
      '-p',
      String(postgres.port),
      '-u',
      postgres.user,
      '--pl',
      'postgres12',
    ];
    for (const step of [
      ['create'],
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', join(schemas, folder, 'versioned')],
    ]) {
      const result = spawnSync(sqlTool, [...base, '--db', database, ...step], { encoding: 'utf8' });
      if (result.status !== 0)
        throw new Error(
          `sql ${step[0]} of ${database} failed: ${(result.stderr || result.stdout).slice(-2000)}`,
        );
    }
  }
  log(`schemas of temporal and temporal_visibility set up with the server's SQL tool`);
}

/** Where Go keeps the server module (its schema files ship inside it). */
function moduleDir(): string {
  const result = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  const dir = join(result.stdout.trim(), 'go.temporal.io', `server@${serverVersion}`);
  if (!existsSync(dir)) throw new Error(`the server module is not in Go's module cache at ${dir}`);
  return dir;
}

function writeConfig(root: string, postgres: Postgres, shards: number, ports: number[]) {
  const [
    frontend,
    frontendMembership,
    frontendHttp,
    history,
    historyMembership,
    matching,
    matchingMembership,
    worker,
    workerMembership,
  ] = ports;
  const store = (database: string, conns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "127.0.0.1:${postgres.port}"
        connectProtocol: tcp
        user: ${postgres.user}
        password: ""
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, extra = '') => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${extra}`;
  const config = `log:
  stdout: true
  level: error
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${shards}
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:${service(frontend!, frontendMembership!, `\n      httpPort: ${frontendHttp}`)}
  history:${service(history!, historyMembership!)}
  matching:${service(matching!, matchingMembership!)}
  worker:${service(worker!, workerMembership!)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:${frontend}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${join(root, 'dynamicconfig.yaml')}
  pollInterval: 10s
`;
  mkdirSync(join(root, 'config'), { recursive: true });
  writeFileSync(join(root, 'config', 'cluster.yaml'), config);
  // The dev servers' settings, and what the tests' short-lived namespaces and fast refreshes need.
  const settings: Record<string, unknown> = {
    ...devServerSettings,
    'frontend.namespaceRPS': 10_000,
    'frontend.namespaceCount': 10_000,
    'system.enableEagerWorkflowStart': true,
  };
  writeFileSync(
    join(root, 'dynamicconfig.yaml'),
    Object.entries(settings)
      .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n    constraints: {}\n`)
      .join(''),
  );
}

async function untilServing(address: string, child: ChildProcess, stderr: () => string) {
  const deadline = Date.now() + 120_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`the Temporal server exited while starting: ${stderr()}`);
    try {
      const connection = await connectTest({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await sleep(500);
    }
  }
  throw new Error(`the Temporal server did not answer on ${address} within 120 s: ${stderr()}`);
}

function createNamespace(cli: string, address: string, namespace: string) {
  const run = (args: string[]) => spawnSync(cli, [...args, '--address', address], { encoding: 'utf8' });
  const created = run(['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '24h']);
  if (created.status !== 0 && !/already (exists|registered)/i.test(created.stderr))
    throw new Error(`creating namespace ${namespace} failed: ${created.stderr}`);
  for (const [name, type] of Object.entries(searchAttributeRegistrations)) {
    const result = run([
      'operator',
      'search-attribute',
      'create',
      '--namespace',
      namespace,
      '--name',
      name,
      '--type',
      type,
    ]);
    if (result.status !== 0 && !/already exists/i.test(result.stderr))
      throw new Error(`registering search attribute ${name} failed: ${result.stderr}`);
  }
}

/** A new namespace reaches the frontend's cache within its refresh interval: wait for it. */
async function untilNamespace(address: string, namespace: string) {
  const connection = await connectTest({ address });
  try {
    for (let tries = 0; ; tries++) {
      try {
        await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1 });
        return;
      } catch (error) {
        if (tries >= 120) throw error;
        await sleep(500);
      }
    }
  } finally {
    await connection.close();
  }
}
