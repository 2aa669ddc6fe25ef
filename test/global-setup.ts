import { spawnSync } from 'node:child_process';
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { dataDir, projectRoot } from './helpers/paths';
import { startDevServer, type DevServer } from '../workers/dev-server';
import { bundleOptions } from '../workers/create-worker';
import { startCluster, type Cluster } from './helpers/cluster';

declare global {
  var agentsKitTestServer: DevServer | Cluster | undefined;
}

/** One real Temporal dev server and one workflow bundle for the whole jest run. */
export default async function globalSetup(): Promise<void> {
  // The CLI and package tests run the compiled code: build it if a source is newer (npm test's
  // bootstrap has done so already; this covers running jest directly).
  const build = spawnSync(process.execPath, [join(projectRoot, 'scripts', 'build.mjs'), '--if-stale'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error(`building dist/ failed (exit ${build.status})`);
  const runDir = join(dataDir, `test-${process.pid}`);
  mkdirSync(runDir, { recursive: true });
  // `npm run test:cluster`: the production-shaped server (PostgreSQL, 4 history shards) instead.
  const server = process.env.AGENTS_KIT_TEST_CLUSTER
    ? await startCluster()
    : await startDevServer({
        dbFile: join(runDir, 'temporal.sqlite'),
        headless: true,
        searchAttributes: searchAttributeRegistrations,
      });
  globalThis.agentsKitTestServer = server;
  const bundle = await bundleWorkflowCode({ ...bundleOptions, logger: quietLogger });
  const bundlePath = join(runDir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  process.env.AGENTS_KIT_TEST_ADDRESS = server.address;
  process.env.AGENTS_KIT_TEST_BUNDLE = bundlePath;
  process.env.AGENTS_KIT_TEST_DIR = runDir;
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};
