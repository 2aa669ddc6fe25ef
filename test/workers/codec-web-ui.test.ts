import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { defaultPayloadConverter } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page } from 'playwright-core';
import { createActivities } from '../../activities';
import { createEncryptionCodec } from '../../client/encryption-codec';
import { ThreadService } from '../../client/thread-service';
import { searchAttributeRegistrations } from '../../domain/search-attributes';
import { startCodecServer, type CodecServer } from '../../workers/codec-server';
import { scriptedTeam } from '../../workers/cli/scripted-team';
import { createAgentWorker } from '../../workers/create-worker';
import { freePort, startDevServer, type DevServer } from '../../workers/dev-server';
import { occurrences } from '../helpers/occurrences';
import { chromiumPath, launchChromium } from '../helpers/browser';
import { projectRoot } from '../helpers/paths';
import { untilTurns } from '../helpers/runs';
import { workflowBundlePath } from '../helpers/temporal';

const screenshotDir = join(projectRoot, 'test-output');
const keys = [{ id: 'web-ui-test', key: randomBytes(32) }];
const codec = createEncryptionCodec({ keys });
/** A task text that exists only in plaintext: found anywhere, the codec was bypassed. */
const marker = `codec-marker-${randomBytes(6).toString('hex')}`;
const dbFile = join(process.env.AGENTS_KIT_TEST_DIR!, `codec-web-ui-${process.pid}.sqlite`);

let codecServer: CodecServer | undefined;
let server: DevServer | undefined;
let connection: Connection | undefined;
let nativeConnection: NativeConnection | undefined;
let worker: Worker | undefined;
let running: Promise<void> | undefined;
let browser: BrowserContext | undefined;
const userDataDir = mkdtempSync(join(tmpdir(), 'agents-kit-chromium-'));

beforeAll(() => {
  try {
    // Worker lifecycle INFO lines drown test output; warnings and errors still show.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already in this process.
  }
});

async function stopTemporal(): Promise<void> {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await nativeConnection?.close();
  await connection?.close();
  await server?.stop();
  worker = running = nativeConnection = connection = server = undefined;
}

afterAll(async () => {
  await browser?.close();
  rmSync(userDataDir, { recursive: true, force: true });
  await stopTemporal();
  await codecServer?.close();
});

/** The text of the page and of its frames (the UI renders markdown summaries in iframes). */
async function pageText(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((frame) =>
      frame
        .locator('body')
        .innerText({ timeout: 5_000 })
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

async function openBrowser(): Promise<Page> {
  browser = await launchChromium(userDataDir, { width: 1600, height: 1100 });
  return browser.pages()[0] ?? (await browser.newPage());
}

test('with the codec server the Web UI shows the decrypted task; the history holds only ciphertext; without it the UI shows ciphertext', async () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `${chromiumPath} is missing: run \`node scripts/bootstrap.mjs\` as root or \`apt-get install -y chromium\``,
    );
  }
  // The UI's origin must be known to the codec server before the dev server starts (it needs the endpoint).
  const uiPort = await freePort();
  codecServer = await startCodecServer({
    port: 0,
    keys,
    corsOrigins: [`http://127.0.0.1:${uiPort}`, `http://localhost:${uiPort}`],
  });
  server = await startDevServer({
    dbFile,
    uiPort,
    uiCodecEndpoint: codecServer.url,
    searchAttributes: searchAttributeRegistrations,
  });
  connection = await connectTest({ address: server.address });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await createAgentWorker({
    connection: nativeConnection,
    taskQueue: 'codec-web-ui',
    activities: createActivities(),
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
    codec,
  });
  running = worker.run();
  const client = new Client({ connection, dataConverter: { payloadCodecs: [codec] } });
  const service = await ThreadService.attach(client, {
    taskQueue: 'codec-web-ui',
    owner: 'tests',
    root: scriptedTeam(marker, []),
    grant: { owner: 'tests', idleTimeoutMs: 600_000 },
  });
  const root = await untilTurns(service, service.rootThreadId, 1);
  expect(root.latestTurn?.result).toBe(`(scripted) ${marker}`);
  const { runId } = await client.workflow.getHandle(service.rootThreadId).describe();
  const pagePath = `/namespaces/default/workflows/${service.rootThreadId}/${runId}/history`;

  // 1. Through the codec server the UI decrypts: the task (in the input, summary and result) is shown.
  const page = await openBrowser();
  mkdirSync(screenshotDir, { recursive: true });
  await page.goto(`${server.uiAddress}${pagePath}`);
  await page.getByText(marker, { exact: false }).first().waitFor({ state: 'visible', timeout: 30_000 });
  await page.screenshot({ path: join(screenshotDir, 'codec-decoded.png'), fullPage: true });
  expect(await pageText(page)).toContain(marker);

  // 2. The history itself, read with a plain client (no codec), holds the task nowhere: not in inputs,
  // results, signals, updates, user metadata or memos, of any workflow of the run.
  await service.complete();
  const plain = new Client({ connection });
  const executions = [];
  for await (const execution of plain.workflow.list()) executions.push(execution);
  expect(executions.length).toBeGreaterThanOrEqual(2); // the root and its conversation
  for (const { workflowId, runId: executionRunId } of executions) {
    const handle = plain.workflow.getHandle(workflowId, executionRunId);
    const history = await handle.fetchHistory();
    const described = await connection.workflowService.describeWorkflowExecution({
      namespace: 'default',
      execution: { workflowId, runId: executionRunId },
    });
    expect(history.events?.length).toBeGreaterThan(0);
    expect({ workflowId, found: occurrences({ history, described }, marker) }).toEqual({
      workflowId,
      found: [],
    });
  }
  // The search is not vacuous: the same walk finds the marker in a plaintext payload.
  expect(occurrences({ input: defaultPayloadConverter.toPayload({ task: marker }) }, marker)).toEqual([
    '$.input.data',
  ]);

  // 3. The same history in a Web UI without the codec endpoint: ciphertext, never the task.
  await stopTemporal();
  server = await startDevServer({ dbFile, searchAttributes: searchAttributeRegistrations });
  await page.goto(`${server.uiAddress}${pagePath}`);
  await page.getByText(service.rootThreadId, { exact: false }).first().waitFor({ timeout: 30_000 });
  // Undecodable payloads are shown as their proto JSON: metadata values in base64, data in base64.
  const encryptedEncoding = Buffer.from('binary/encrypted').toString('base64');
  await page.getByText(encryptedEncoding, { exact: false }).first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(screenshotDir, 'codec-ciphertext.png'), fullPage: true });
  const shown = await pageText(page);
  expect(shown).toContain('encryption-key-id');
  expect(shown).not.toContain(marker);
}, 240_000);
