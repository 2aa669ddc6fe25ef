// The real Temporal dev server for tests, the demo and the CLI: find or build the `temporal` binary,
// start `temporal server start-dev` on a SQLite file, wait until it answers, stop it cleanly.
// Plain Node with no dependencies, because it runs before `npm ci` has installed anything.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync } = require('node:fs');
const { createServer } = require('node:net');
const { delimiter, dirname, join, resolve } = require('node:path');

const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const projectRoot = resolve(__dirname, '..');
const dataDir = join(projectRoot, '.data');

const log = (line) => process.stderr.write(`[agents-kit] ${line}\n`);

function isExecutable(path) {
  return (
    Boolean(path) && existsSync(path) && spawnSync(path, ['--version'], { stdio: 'ignore' }).status === 0
  );
}

function goBinary() {
  for (const candidate of ['go', '/usr/local/go/bin/go']) {
    const probe = spawnSync(candidate, ['version'], { stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

function goBinDir(go) {
  const out = spawnSync(go, ['env', 'GOBIN', 'GOPATH'], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const [gobin, gopath] = out.stdout.split('\n');
  return gobin?.trim() || (gopath?.trim() ? join(gopath.trim().split(delimiter)[0], 'bin') : undefined);
}

/** Where an existing `temporal` binary is: $TEMPORAL_CLI_PATH, then PATH, then Go's bin folder. */
function findTemporalBinary() {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable temporal binary`);
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'temporal');
    if (dir && isExecutable(candidate)) return candidate;
  }
  const go = goBinary();
  const binDir = go && goBinDir(go);
  const candidate = binDir && join(binDir, 'temporal');
  return candidate && isExecutable(candidate) ? candidate : undefined;
}

/** Finds the binary, or builds it from the Temporal CLI Go module, printing progress while Go works. */
async function ensureTemporalBinary() {
  const found = findTemporalBinary();
  if (found) return found;
  const go = goBinary();
  if (!go) {
    throw new Error(
      'no temporal binary found and Go is not installed: install Go (https://go.dev) or set TEMPORAL_CLI_PATH',
    );
  }
  log(`building the Temporal dev server: go install ${TEMPORAL_CLI_MODULE}`);
  log('this happens once per machine (about 4 minutes; later runs reuse the binary)');
  const started = Date.now();
  const child = spawn(go, ['install', TEMPORAL_CLI_MODULE], {
    env: { ...process.env, CGO_ENABLED: '0' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ticker = setInterval(
    () => log(`still building the temporal binary (${Math.round((Date.now() - started) / 1000)} s)…`),
    20_000,
  );
  const code = await new Promise((done) => child.on('exit', (status) => done(status)));
  clearInterval(ticker);
  if (code !== 0) throw new Error(`go install ${TEMPORAL_CLI_MODULE} failed with exit code ${code}`);
  const built = join(goBinDir(go), 'temporal');
  if (!isExecutable(built)) throw new Error(`go install succeeded but ${built} does not run`);
  log(`built ${built} in ${Math.round((Date.now() - started) / 1000)} s`);
  return built;
}

/** A TCP port that was free a moment ago. */
function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/**
 * Dynamic config every dev server of ours gets (the compose stack's file has the same values).
 * - Agents rely on updates and on search attributes being visible right after an upsert.
 * - The server reads its queue of internal tasks (deliver a workflow's signal to another workflow,
 *   dispatch a workflow task, start a child) at most `transferProcessorMaxPollRPS` times a second per
 *   history shard; the default 20 adds up to 50 ms to every such hop once more than 20 a second happen
 *   on a shard, and the dev server has a single shard. An agent tree makes many workflow-to-workflow
 *   hops: measured with `npm run bench`, sendMessage → delivery went from 88 ms to 28 ms (BENCHMARKS.md).
 */
const devServerSettings = {
  'frontend.enableUpdateWorkflowExecution': true,
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'history.transferProcessorMaxPollRPS': 1000,
};

/**
 * SQLite settings of every dev server of ours. WAL with `synchronous=NORMAL` writes each commit to the
 * log without an fsync (checkpoints still sync): a commit survives the server process being killed,
 * which is what our crash and restart tests do, and can be lost only to a power cut or an OS crash,
 * acceptable for a dev server (the compose stack runs on Postgres). The fsync per commit was the dev
 * server's bottleneck: a 1,000-thread run took 123 s with it and 65 s without (RELIABILITY.md).
 */
const devServerPragmas = ['journal_mode=WAL', 'synchronous=NORMAL'];

/**
 * Starts `temporal server start-dev` on a SQLite file and resolves once it answers a health check.
 * A reaper process stops the server if this process dies without stopping it (SIGKILL included).
 *
 * @param {{ dbFile?: string, port?: number, uiPort?: number, headless?: boolean, namespace?: string,
 *   searchAttributes?: Record<string, string>, logLevel?: string, quiet?: boolean,
 *   dynamicConfig?: Record<string, unknown>, sqlitePragmas?: string[] }} [options]  `dynamicConfig`
 *   overrides `devServerSettings`; `sqlitePragmas` replaces `devServerPragmas`
 */
async function startDevServer(options = {}) {
  // A free port can be taken by someone else before the server binds it; the server then exits at
  // once. With ports of our choosing, try again on fresh ones.
  const retries = options.port === undefined && options.uiPort === undefined ? 2 : 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await startDevServerOnce(options);
    } catch (error) {
      if (attempt >= retries || !(error instanceof Error) || !/exited before answering/.test(error.message))
        throw error;
      process.stderr.write(`[temporal] ${error.message}; starting it again on other ports\n`);
    }
  }
}

async function startDevServerOnce(options) {
  const binary = await ensureTemporalBinary();
  const port = options.port ?? (await freePort());
  const uiPort = options.uiPort ?? (await freePort());
  const namespace = options.namespace ?? 'default';
  const dbFile = options.dbFile ?? join(dataDir, `temporal-${port}.sqlite`);
  mkdirSync(dirname(dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--namespace',
    namespace,
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
  for (const [name, type] of Object.entries(options.searchAttributes ?? {})) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  const server = spawn(binary, args, {
    stdio: ['ignore', options.quiet === false ? 'inherit' : 'ignore', 'pipe'],
  });
  // The start of stderr (where a failure's cause is) and its end.
  let stderrHead = '';
  let stderr = '';
  server.stderr.on('data', (chunk) => {
    if (stderrHead.length < 4000) stderrHead = (stderrHead + chunk).slice(0, 4000);
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise((done) => server.on('exit', (code, signal) => done({ code, signal })));
  const reaper = spawn(process.execPath, [__filename, 'reap', String(process.pid), String(server.pid)], {
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
      process.kill(reaper.pid, 'SIGTERM');
    } catch {
      // the reaper already left
    }
  };

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) {
      // The cause is near the top (a panic's stack follows it); show that and the last lines.
      const cause = stderrHead.split('\n').filter((line) => /panic|fatal|error|in use/i.test(line));
      const last = stderr.trim().split('\n').slice(-2);
      throw new Error(
        `temporal server start-dev exited before answering: ${[...cause.slice(0, 3), ...last].join(' | ')}`,
      );
    }
    const health = spawnSync(binary, ['operator', 'cluster', 'health', '--address', address], {
      encoding: 'utf8',
    });
    if (health.status === 0 && /SERVING/.test(health.stdout)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`temporal dev server on ${address} did not become healthy within 60 s`);
    }
    await sleep(200);
  }
  return {
    binary,
    address,
    namespace,
    dbFile,
    pid: server.pid,
    uiAddress: options.headless ? undefined : `http://127.0.0.1:${uiPort}`,
    stop,
    exited,
  };
}

/** `node temporal.cjs reap <parentPid> <serverPid>`: stop the server once its owner is gone. */
async function reap(parentPid, serverPid) {
  const alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  while (alive(serverPid)) {
    if (!alive(parentPid)) {
      process.kill(serverPid, 'SIGTERM');
      await sleep(10_000);
      if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
      return;
    }
    await sleep(500);
  }
}

module.exports = {
  TEMPORAL_CLI_MODULE,
  projectRoot,
  dataDir,
  findTemporalBinary,
  ensureTemporalBinary,
  freePort,
  startDevServer,
  devServerSettings,
  devServerPragmas,
};

if (require.main === module) {
  const [command, ...rest] = process.argv.slice(2);
  const run =
    command === 'reap'
      ? reap(Number(rest[0]), Number(rest[1]))
      : command === 'ensure'
        ? ensureTemporalBinary().then(console.log)
        : undefined;
  if (!run) {
    console.error('usage: node scripts/temporal.cjs ensure | reap <parentPid> <serverPid>');
    process.exit(2);
  }
  run.catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
