// `npm run build` (also run by `prepack` and, when a source changed, by the bootstrap): compiles the product folders to
// JavaScript + declaration files in dist/, then builds the workflow bundle that ships in the package
// (dist/workflow-bundle.js, and dist/workflow-bundle-untraced.js for workers without tracing), so an
// installed worker starts without running webpack.
// `--if-stale` builds only when a source file is newer than the last build (bootstrap, jest set-up).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { portableSourceMap } from './portable-source-map.mjs';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(projectRoot, 'package.json'));
const dist = join(projectRoot, 'dist');
const log = (line) => process.stderr.write(`[agents-kit] ${line}\n`);

// Outside dist/ so it never ships; `npm ci` removes it with node_modules, so a new install builds again.
const stamp = join(projectRoot, 'node_modules', '.agents-kit-build-stamp');
const sources = ['domain', 'workflows', 'activities', 'workers', 'client'];

/** The newest modification time of the build's inputs. */
function newestInput() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const folder of sources) visit(join(projectRoot, folder));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])
    visit(join(projectRoot, file));
  return newest;
}

if (process.argv.includes('--if-stale') && existsSync(stamp) && statSync(stamp).mtimeMs >= newestInput()) {
  process.exit(0);
}

const started = Date.now();
// Built beside dist/ and swapped in at the end, so a process reading dist/ meanwhile never sees half a build.
const next = join(projectRoot, '.dist-next');
log('building dist/: tsc -p tsconfig.build.json');
rmSync(next, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', next],
  { cwd: projectRoot, stdio: 'inherit' },
);
if (tsc.status !== 0) {
  log(`tsc failed with exit code ${tsc.status}`);
  process.exit(1);
}

const { bundleWorkflowCode } = require('@temporalio/worker');
const { bundleOptions, untracedBundleOptions } = require(join(next, 'workers', 'create-worker.js'));
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };
// Traced workers load the first, workers without tracing the second (no span building at all).
for (const [file, options] of [
  ['workflow-bundle.js', bundleOptions],
  ['workflow-bundle-untraced.js', untracedBundleOptions],
]) {
  log(`bundling the workflow code: dist/${file}`);
  const bundle = await bundleWorkflowCode({ ...options, logger: quiet });
  writeFileSync(join(next, file), portableSourceMap(bundle.code, { projectRoot, buildDir: next }));
}
rmSync(dist, { recursive: true, force: true });
renameSync(next, dist);
writeFileSync(stamp, `${new Date().toISOString()}\n`);
log(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
