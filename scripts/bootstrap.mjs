// First step of `npm test` and `npm run demo` on any machine: install the npm packages when they are
// missing or stale, and make sure the real Temporal dev server binary exists (building it with Go if
// needed). Plain Node with no dependencies; a second run finds everything and takes well under a second.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTemporalBinary, projectRoot } from './temporal.cjs';

const log = (line) => process.stderr.write(`[agents-kit] ${line}\n`);

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
  const binary = await ensureTemporalBinary();
  log(`Temporal dev server binary: ${binary}`);
} catch (error) {
  log(`bootstrap failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
