import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
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
