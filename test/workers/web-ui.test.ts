import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext } from 'playwright-core';
import { createActivities } from '../../activities';
import { ThreadService } from '../../client/thread-service';
import { searchAttributeRegistrations } from '../../domain/search-attributes';
import { chromiumPath, launchChromium } from '../helpers/browser';
import { projectRoot } from '../helpers/paths';
import { startDevServer, type DevServer } from '../../workers/dev-server';
import { scriptedTeam } from '../../workers/cli/scripted-team';
import { createAgentWorker } from '../../workers/create-worker';
import { untilTurns } from '../helpers/runs';
import { workflowBundlePath } from '../helpers/temporal';

const screenshotDir = join(projectRoot, 'test-output');

let server: DevServer;
let connection: Connection;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let browser: BrowserContext | undefined;
const userDataDir = mkdtempSync(join(tmpdir(), 'agents-kit-chromium-'));

beforeAll(async () => {
  // The shared test server is headless; this test needs the embedded Web UI.
  server = await startDevServer({
    dbFile: join(process.env.AGENTS_KIT_TEST_DIR!, 'web-ui.sqlite'),
    searchAttributes: searchAttributeRegistrations,
  });
  connection = await connectTest({ address: server.address });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await createAgentWorker({
    connection: nativeConnection,
    taskQueue: 'web-ui',
    activities: createActivities(),
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
  });
  running = worker.run();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  rmSync(userDataDir, { recursive: true, force: true });
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
  await server?.stop();
});

test('the Web UI lists one run’s sub-agents by AgentRootThreadId, with their summaries', async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `${chromiumPath} is missing: run \`node scripts/bootstrap.mjs\` as root (it installs Debian chromium) or \`apt-get install -y chromium\``,
    );
  }
  const service = await ThreadService.attach(new Client({ connection }), {
    taskQueue: 'web-ui',
    owner: 'tests',
    root: scriptedTeam('survey the durable agent landscape', ['scout', 'scribe']),
    grant: { owner: 'tests', idleTimeoutMs: 600_000 },
  });
  await untilTurns(service, service.rootThreadId, 1);
  const threads = await service.rootControls().listThreads();
  const children = threads.filter((thread) => thread.depth === 1);
  expect(children.map((thread) => thread.path)).toEqual(['/root/scout', '/root/scribe']);

  browser = await launchChromium(userDataDir, { width: 1600, height: 1000 });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const query = `AgentRootThreadId="${service.rootThreadId}"`;
  const listUrl = `${server.uiAddress}/namespaces/default/workflows?query=${encodeURIComponent(query)}`;
  await page.goto(listUrl);
  // The SPA loads the list asynchronously: wait for each workflow id to be rendered.
  for (const thread of threads) {
    await page.getByText(thread.id, { exact: false }).first().waitFor({ timeout: 30_000 });
  }
  const listed = await page.locator('body').innerText();
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, 'web-ui-root-run.png'), fullPage: true });
  for (const thread of threads) expect(listed).toContain(thread.id);
  // The list has no summary column: each sub-agent's page shows its static summary.
  for (const child of children) {
    await page.locator(`a[href*="/workflows/${child.id}/"]`).first().click();
    await page.getByRole('heading', { name: child.id }).first().waitFor({ timeout: 30_000 });
    // The static summary is shown under the workflow's User Metadata tab.
    await page.getByText('User Metadata', { exact: true }).first().click();
    // The UI renders the summary (markdown) inside an iframe under the "Summary" heading.
    await page.getByText('Summary', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page
      .locator('iframe')
      .first()
      .contentFrame()
      .getByText(`${child.path}: ${child.task}`)
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 });
    await page.screenshot({ path: join(screenshotDir, `web-ui-${child.name}.png`), fullPage: true });
    await page.goto(listUrl);
  }
  await service.complete();
}, 120_000);
