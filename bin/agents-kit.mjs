#!/usr/bin/env node
// The `agents-kit` command: runs the compiled CLI (dist/workers/cli.js) in this process, so `--help`
// answers at once. Commands that run a worker (`worker`, `dev`) are started in a child process with a
// heap cap in NODE_OPTIONS (its workflow threads get it too), unless the caller set one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(packageRoot, 'dist', 'workers', 'cli.js');
if (!existsSync(cli)) {
  process.stderr.write(`agents-kit: ${cli} is missing: build the package first (npm run build)\n`);
  process.exit(1);
}
const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const runsWorker = args[0] === 'worker' || args[0] === 'dev';
const { workerNodeOptions } = require(join(packageRoot, 'dist', 'workers', 'heap-cap.js'));
const nodeOptions = runsWorker ? workerNodeOptions(process.env) : process.env.NODE_OPTIONS;

if (!runsWorker || nodeOptions === (process.env.NODE_OPTIONS ?? '')) {
  require(cli);
} else {
  // The IPC channel tells the child when this process is gone, killed in a way it could not pass on
  // (dist/workers/wrapper-watch.js): the child then stops too, instead of polling on with no parent.
  const child = spawn(process.execPath, [cli, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: nodeOptions, AGENTS_KIT_WRAPPED: '1' },
  });
  // Ctrl-C reaches the child through the terminal's process group; forward signals sent to this process alone.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) =>
    process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1)),
  );
}
