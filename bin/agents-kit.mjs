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
const child = spawn(
  process.execPath,
  [tsxCli, join(packageRoot, 'workers', 'cli.ts'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
// Ctrl-C reaches the child through the terminal's process group; forward signals sent to this process alone.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1)));
