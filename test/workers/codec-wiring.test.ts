import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { loadCodecKeys } from '../../client/codec-keys';
import { join } from 'node:path';
import { KitError } from '../../domain/errors';
import { relatedId } from '../../domain/ids';
import { loadConfig } from '../../workers/config';
import { startCodecServer } from '../../workers/codec-server';
import { freePort } from '../../workers/dev-server';
import { ensureTemporalBinary } from '../../workers/temporal-binary';
import { runCli, startCli, untilOutput } from '../helpers/cli';
import { occurrences } from '../helpers/occurrences';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';

// AGENTS_KIT_CODEC_KEYS turns the codec on in every process agents-kit starts from configuration: the
// worker (`agents-kit worker` / `dev`, runWorker) and every CLI command's client (connectClient).

let temporal: TestTemporal;
/** Runs a program to completion, asynchronously (the codec server answering it is in this process). */
const runProgram = async (file: string, args: string[]) =>
  (await promisify(execFile)(file, args, { encoding: 'utf8', timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }))
    .stdout;
const keys = `2026-a:${randomBytes(32).toString('base64')}`;

beforeAll(async () => {
  temporal = await connectTestTemporal();
});
afterAll(async () => temporal?.close());

test('loadConfig refuses bad codec keys at start-up, naming the variable', () => {
  expect(loadConfig({ AGENTS_KIT_CODEC_KEYS: keys }).AGENTS_KIT_CODEC_KEYS).toBe(keys);
  expect(loadConfig({ AGENTS_KIT_CODEC_KEYS: '' }).AGENTS_KIT_CODEC_KEYS).toBeUndefined();
  let thrown: unknown;
  try {
    loadConfig({ AGENTS_KIT_CODEC_KEYS: 'k:c2hvcnQ=' });
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(KitError);
  expect((thrown as KitError).kind).toBe('Protocol');
  expect((thrown as KitError).message).toMatch(
    /^AGENTS_KIT_CODEC_KEYS: entry 1 \(id "k"\): the key must decode to exactly 32 bytes, got 5/,
  );
});

test('with AGENTS_KIT_CODEC_KEYS, agents-kit worker and run encrypt: the history holds no task text, and a client without the keys cannot read the run', async () => {
  const taskQueue = uniqueTaskQueue('codec-cli');
  const marker = `cli-marker-${randomBytes(6).toString('hex')}`;
  const env = {
    TEMPORAL_ADDRESS: temporal.address,
    AGENTS_KIT_TASK_QUEUE: taskQueue,
    AGENTS_KIT_CODEC_KEYS: keys,
  };
  const worker = startCli(['worker', '--workflow-bundle', workflowBundlePath()], env);
  try {
    await untilOutput(worker, new RegExp(`worker polling task queue ${taskQueue}`));
    const run = await runCli(['run', marker, '--agents', 'helper', '--keep', '--json'], env);
    expect(run.code).toBe(0);
    const { rootThreadId, root, capability } = JSON.parse(run.stdout) as {
      rootThreadId: string;
      root: { latestTurn?: { result?: string } };
      capability: string;
    };
    expect(root.latestTurn?.result).toMatch(/^done with 1 sub-agent/);

    // Every workflow of the run (root, helper, their conversations), read without the codec.
    const histories: unknown[] = [];
    for await (const execution of temporal.client.workflow.list({ query: `TaskQueue="${taskQueue}"` })) {
      histories.push(await temporal.client.workflow.getHandle(execution.workflowId).fetchHistory());
    }
    expect(histories.length).toBeGreaterThanOrEqual(3);
    expect(occurrences(histories, 'binary/encrypted').length).toBeGreaterThan(10);
    expect(occurrences(histories, marker)).toEqual([]);
    // The run key travels in every workflow input (SPEC S3.9): with the codec, no history shows it.
    expect(occurrences(histories, capability)).toEqual([]);

    // The Temporal CLI reads it through a codec server with the keys, and sees ciphertext without one.
    const decodedData = async (codecEndpoint: string | undefined) => {
      const shown = await runProgram(await ensureTemporalBinary(), [
        'workflow',
        'show',
        '--workflow-id',
        rootThreadId,
        '--address',
        temporal.address,
        '--output',
        'json',
        ...(codecEndpoint ? ['--codec-endpoint', codecEndpoint] : []),
      ]);
      return [...shown.matchAll(/"data": *"([^"]*)"/g)].map((match) =>
        Buffer.from(match[1]!, 'base64').toString('latin1'),
      );
    };
    const codecServer = await startCodecServer({
      port: 0,
      keys: loadCodecKeys({ AGENTS_KIT_CODEC_KEYS: keys })!,
    });
    try {
      expect((await decodedData(codecServer.url)).some((data) => data.includes(marker))).toBe(true);
    } finally {
      await codecServer.close();
    }
    const undecoded = await decodedData(undefined);
    expect(undecoded.length).toBeGreaterThan(5);
    expect(undecoded.some((data) => data.includes(marker))).toBe(false);

    // The CLI with the keys reads the run; without them it fails with one line instead of showing garbage.
    const withKey = { ...env, AGENTS_KIT_CAPABILITY: capability };
    const tree = await runCli(['tree', rootThreadId], withKey);
    expect(tree.code).toBe(0);
    expect(tree.stdout).toMatch(/\/root\/helper +idle/);
    const blind = await runCli(['tree', rootThreadId], { ...withKey, AGENTS_KIT_CODEC_KEYS: undefined });
    expect(blind.code).toBe(1);
    expect(blind.stderr).toBe(
      'agents-kit: Protocol: cannot decrypt a Temporal payload: it is encrypted (key "2026-a") and this process has no codec keys: set AGENTS_KIT_CODEC_KEYS to the keys of the workers\n',
    );
    // `watch` without them says the same, not that the capability is missing (it is set).
    const blindWatch = await runCli(['watch', relatedId('conversation', rootThreadId), '--limit', '1'], {
      ...withKey,
      AGENTS_KIT_CODEC_KEYS: undefined,
    });
    expect(blindWatch.code).toBe(1);
    expect(blindWatch.stderr).toMatch(
      /^agents-kit: Protocol: .*cannot decrypt a Temporal payload: it is encrypted \(key "2026-a"\) and this process has no codec keys/,
    );
    const wrongKeys = await runCli(['tree', rootThreadId], {
      ...withKey,
      AGENTS_KIT_CODEC_KEYS: `2026-b:${randomBytes(32).toString('base64')}`,
    });
    expect(wrongKeys.code).toBe(1);
    // Its query is encrypted with 2026-b, which the worker cannot decrypt: the query fails, naming both.
    expect(wrongKeys.stderr).toMatch(
      /^agents-kit: \w+: (?:snapshot|listThreads): cannot decrypt a Temporal payload: it was encrypted with key "2026-b", which is not among this codec's keys \(2026-a\)/,
    );
    // The run itself is unharmed: with the keys, the CLI shuts it down.
    const shutdown = await runCli(['shutdown', rootThreadId, '--json'], withKey);
    expect(shutdown.code).toBe(0);
    expect(JSON.parse(shutdown.stdout)).toMatchObject({ rootThreadId, failed: [], unconfirmed: [] });
  } finally {
    worker.kill('SIGTERM');
  }
  expect((await worker.done).code).toBe(0);
}, 120_000);

test('agents-kit dev --ui-codec-endpoint hands the endpoint to the Web UI; a bad URL is a Protocol error', async () => {
  const port = await freePort();
  const uiPort = await freePort();
  const endpoint = 'http://127.0.0.1:8888';
  const dev = startCli([
    'dev',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--ui-codec-endpoint',
    `${endpoint}/`,
    '--json',
    '--db-file',
    join(process.env.AGENTS_KIT_TEST_DIR!, `codec-dev-${port}.sqlite`),
    '--workflow-bundle',
    workflowBundlePath(),
  ]);
  try {
    await untilOutput(dev, /stop with Ctrl-C/);
    expect(JSON.parse(dev.output().stdout)).toMatchObject({ uiCodecEndpoint: endpoint });
    // The UI reads its codec endpoint from its settings API; the browser then calls it.
    const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as {
      Codec?: { Endpoint?: string };
    };
    expect(settings.Codec?.Endpoint).toBe(endpoint);
  } finally {
    dev.kill('SIGINT');
  }
  expect((await dev.done).code).toBe(0);
  const bad = await runCli(['dev', '--ui-codec-endpoint', 'ftp://codec']);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/^agents-kit: Protocol: dev: --ui-codec-endpoint: expected an http\(s\) URL/);
}, 120_000);
