// First step of `npm test` and `npm run demo` on any machine: install the npm packages when they are
// missing or stale, build dist/ when a source is newer than it, and make sure the real Temporal dev
// server binary exists (building it with Go if needed). Plain Node with no dependencies until the
// packages are there; a second run finds everything and takes well under a second.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const log = (line) => process.stderr.write(`[agents-kit] ${line}\n`);

/**
 * The browser test drives Debian's chromium. Install it only where that is safe and possible: as root,
 * with apt-get, when /usr/bin/chromium is missing. Never fatal: without it only the browser test fails.
 */
function ensureChromium() {
  const chromium = '/usr/bin/chromium';
  if (existsSync(chromium)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!isRoot || !hasApt) {
    log(
      `${chromium} is missing and cannot be installed here (needs root and apt-get): the browser test will fail`,
    );
    return;
  }
  log(
    'installing Debian chromium for the Web UI browser test: apt-get update && apt-get install -y chromium',
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'chromium']]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) {
      log(`apt-get ${args.join(' ')} failed with exit code ${result.status}: the browser test will fail`);
      return;
    }
  }
  log(`installed ${chromium}`);
}

function packagesAreCurrent() {
  const installed = join(projectRoot, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return false;
  return statSync(installed).mtimeMs >= statSync(join(projectRoot, 'package-lock.json')).mtimeMs;
}

try {
  if (!packagesAreCurrent()) {
    log('installing npm packages (npm ci)…');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: projectRoot, stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`npm ci failed with exit code ${result.status}`);
  }
  // dist/ is built when missing or older than a source (the packed package is built by `prepack`).
  const build = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build.mjs'), '--if-stale'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error(`npm run build failed with exit code ${build.status}`);
  const require = createRequire(import.meta.url);
  const { ensureTemporalBinary } = require(join(projectRoot, 'dist', 'workers', 'temporal-binary.js'));
  const binary = await ensureTemporalBinary();
  log(`Temporal dev server binary: ${binary}`);
  // Only the test suite drives a browser; the demo does not need one.
  if (process.argv.includes('--with-browser')) ensureChromium();
} catch (error) {
  log(`bootstrap failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
