import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { KitError } from '../../domain/errors';
import { runCli } from '../helpers/cli';
import { dataDir, projectRoot } from '../helpers/paths';
import { startDevServer } from '../../workers/dev-server';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

const testDir = process.env.AGENTS_KIT_TEST_DIR ?? dataDir;

/** The processes whose command line mentions `text` (a dev server names its database file). */
function processesMentioning(text: string): number[] {
  const mentions = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
    } catch {
      return false; // gone meanwhile
    }
  };
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && mentions(name))
    .map(Number);
}

/** A plain TCP listener on a port of its own, standing for another program on that port. */
async function occupyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, server };
}

test('stop() ends the dev server process', async () => {
  const server = await startDevServer({
    dbFile: join(process.env.AGENTS_KIT_TEST_DIR ?? dataDir, `stop-${process.pid}.sqlite`),
    headless: true,
  });
  expect(alive(server.pid)).toBe(true);
  await server.stop();
  expect(alive(server.pid)).toBe(false);
  expect(await server.exited).toEqual({ code: 0, signal: null });
});

test('a dev server outlives no owner: SIGKILL of the process that started it stops it', async () => {
  const owner = spawn(
    process.execPath,
    [
      '-e',
      `require(${JSON.stringify(join(projectRoot, 'dist', 'workers', 'dev-server.js'))})
        .startDevServer({ headless: true, dbFile: ${JSON.stringify(join(process.env.AGENTS_KIT_TEST_DIR ?? dataDir, `orphan-${process.pid}.sqlite`))} })
        .then((server) => console.log(server.pid))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: owner.stdout! });
  const serverPid = Number(await new Promise<string>((done) => lines.once('line', done)));
  expect(alive(serverPid)).toBe(true);
  owner.kill('SIGKILL');
  await until(() => !alive(serverPid), 'the orphaned dev server to stop');
});

test('a port in use is refused: Conflict naming the port, no server left running, no database', async () => {
  const taken = await occupyPort();
  try {
    for (const { option, what, options } of [
      { option: 'port', what: 'the Temporal port', options: { port: taken.port, headless: true } },
      { option: 'uiPort', what: 'the Web UI port', options: { uiPort: taken.port } },
    ]) {
      const dbFile = join(testDir, `taken-${option}-${process.pid}.sqlite`);
      const refused = await startDevServer({ ...options, dbFile }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(KitError.is(refused) && refused.kind).toBe('Conflict');
      expect((refused as Error).message).toMatch(`${what} ${taken.port} is already in use`);
      expect((refused as KitError).details).toEqual({ port: taken.port, option });
      expect(existsSync(dbFile)).toBe(false);
      expect(processesMentioning(dbFile)).toEqual([]);
    }
  } finally {
    taken.server.close();
  }
}, 120_000);

test('agents-kit dev on the port of another Temporal server exits 1 naming the port and --port', async () => {
  // The port of the suite's own dev server: the case of a second `agents-kit dev` on a busy port.
  const port = process.env.AGENTS_KIT_TEST_ADDRESS!.split(':').at(-1)!;
  const dbFile = join(testDir, `second-dev-${process.pid}.sqlite`);
  const result = await runCli(['dev', '--port', port, '--headless', '--db-file', dbFile], {}, 120_000);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(
    new RegExp(
      `^agents-kit: Conflict: the Temporal port ${port} is already in use on 127\\.0\\.0\\.1 .*choose another port with --port$`,
      'm',
    ),
  );
  expect(result.stdout).not.toMatch(/Temporal:|database:/);
  expect(result.stderr).not.toMatch(/^agents-kit: ready/m);
  expect(existsSync(dbFile)).toBe(false);
  expect(processesMentioning(dbFile)).toEqual([]);
}, 180_000);
