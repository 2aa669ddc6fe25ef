#!/usr/bin/env node
// The `agents-kit` command: runs the TypeScript entry (workers/cli.ts) with the tsx of this package's
// own node_modules, so it works from any directory and with no global tsx.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(packageRoot, 'package.json'));
const tsxCli = require.resolve('tsx/cli');
const args = process.argv.slice(2);

/**
 * A worker's heap cap, unless the caller set one: evicting cached workflows makes garbage, and without a
 * cap V8 lets RSS float far above what is live (RELIABILITY.md, worker memory). Sized for the cache:
 * half a megabyte per cached workflow (each measured at ~0.2–0.4 MB) plus room for the rest.
 */
function nodeOptions() {
  const options = process.env.NODE_OPTIONS ?? '';
  if (args[0] !== 'worker' || /max-old-space-size/.test(options)) return options;
  const defaultCache = 1000; // workers/create-worker.ts: defaultMaxCachedWorkflows (this file runs before tsx)
  const cached = Number(process.env.AGENTS_KIT_MAX_CACHED_WORKFLOWS || defaultCache);
  // A bad value is reported by the worker's own configuration check; the cap then uses the default.
  const workflows = Number.isInteger(cached) && cached > 0 ? cached : defaultCache;
  return `${options} --max-old-space-size=${Math.round(512 + 0.5 * workflows)}`.trim();
}

// Through NODE_OPTIONS, so the process tsx starts (and its workflow threads) get the cap too.
const child = spawn(process.execPath, [tsxCli, join(packageRoot, 'workers', 'cli.ts'), ...args], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: nodeOptions() },
});
// Ctrl-C reaches the child through the terminal's process group; forward signals sent to this process alone.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1)));
