import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { newId, relatedId } from '../../domain/ids';
import { liveWatchedMemoKey } from '../../domain/live-output';
import { freePort } from '../../workers/dev-server';
import { runCli, startCli, untilOutput } from '../helpers/cli';
import { projectRoot } from '../helpers/paths';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';
import { slowTool } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cli');
const slow = slowTool();
let env: Record<string, string>;

beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: (await import('../../activities')).createActivities({ tools: [slow.tool] }),
  });
  env = { TEMPORAL_ADDRESS: temporal.address, AGENTS_KIT_TASK_QUEUE: taskQueue };
});
afterAll(async () => temporal?.close());

const parsed = <Value>(stdout: string): Value => JSON.parse(stdout) as Value;
interface TreeJson {
  rootThreadId: string;
  threads: { id: string; path: string; status: string; turnsCompleted: number }[];
}

test('run: attaches a scripted root, streams progress, prints the tree and results, completes the run', async () => {
  const result = await runCli(['run', 'plan a durable trip', '--max-depth', '2'], env);
  expect(result.code).toBe(0);
  expect(result.stderr).toContain('model: scripted');
  expect(result.stderr).toMatch(/\/root\/researcher (running|idle)/);
  expect(result.stderr).toMatch(/run completed: cancelled \d+/);
  expect(result.stdout).toMatch(/^\/root +\S+ +turns 1\/1 +thread_[0-9a-f]{32} +done with 2 sub-agent/m);
  expect(result.stdout).toMatch(
    /^ {2}\/root\/researcher +\S+ +turns 1\/1 .*researcher looked at the task \(4 words\)/m,
  );
  expect(result.stdout).toMatch(/^ {2}\/root\/writer /m);
  expect(result.stdout).toMatch(/^root: done with 2 sub-agent\(s\)/m);
});

test('tree, send, interrupt, reconcile and shutdown work on a run left running with run --keep --json', async () => {
  const run = await runCli(['run', 'keep me', '--agents', 'alpha,beta', '--keep', '--json'], env);
  expect(run.code).toBe(0);
  const { rootThreadId, threads, capability } = parsed<TreeJson & { capability: string }>(run.stdout);
  expect(capability).toMatch(/^[0-9a-f]{64}$/);
  // Acting on the run later needs its capability (SPEC S3.9); without it every command is refused.
  const refused = await runCli(['tree', rootThreadId], env);
  expect(refused.stderr).toMatch(/^agents-kit: PermissionDenied: acting on root .* needs its capability/);
  const withKey = { ...env, AGENTS_KIT_CAPABILITY: capability };
  const alpha = threads.find((thread) => thread.path === '/root/alpha')!;
  expect(threads.map((thread) => thread.path).sort()).toEqual(['/root', '/root/alpha', '/root/beta']);

  const tree = await runCli(['tree', rootThreadId], withKey);
  expect(tree.code).toBe(0);
  expect(tree.stdout).toMatch(new RegExp(`^  /root/alpha +idle +turns 1/1 +${alpha.id} +alpha looked`, 'm'));

  const sent = await runCli(
    ['send', rootThreadId, alpha.id, 'one more pass', '--trigger', '--json'],
    withKey,
  );
  expect(sent.code).toBe(0);
  expect(parsed(sent.stdout)).toMatchObject({
    sender: rootThreadId,
    recipient: alpha.id,
    seq: 1,
    triggerTurn: true,
  });
  await eventually(
    async () => parsed<TreeJson>((await runCli(['tree', rootThreadId, '--json'], withKey)).stdout),
    (view) => view.threads.find((thread) => thread.id === alpha.id)?.turnsCompleted === 2,
    'the triggered second turn of alpha',
  );

  const receipt = await runCli(['interrupt', rootThreadId, alpha.id, '--json'], withKey);
  expect(receipt.code).toBe(0);
  expect(parsed(receipt.stdout)).toEqual({ thread: alpha.id, cancellationRequested: false });

  const requestId = newId('request', randomUUID);
  const reconciled = await runCli(
    ['reconcile', rootThreadId, '--request', JSON.stringify({ request: { task: 'never sent', requestId } })],
    withKey,
  );
  expect(reconciled.code).toBe(0);
  expect(reconciled.stdout).toMatch(/^uncertain \(missing\)/);

  const shutdown = await runCli(['shutdown', rootThreadId], withKey);
  expect(shutdown.code).toBe(0);
  expect(shutdown.stdout).toMatch(/^cancelled [1-9]/m);
  expect(shutdown.stdout).toMatch(/^failed 0$/m);
  expect(shutdown.stdout).toMatch(/^unconfirmed 0$/m);
  const again = await runCli(['shutdown', rootThreadId, '--json'], withKey);
  expect(again.code).toBe(0);
  expect(parsed(again.stdout)).toMatchObject({ rootThreadId, failed: [], unconfirmed: [] });
});

test('interrupt cancels a running turn (receipt) and --signal sends the plain interrupt signal', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const controls = service.rootControls();
  const withKey = { ...env, AGENTS_KIT_CAPABILITY: service.capability };
  const busy = async (label: string) => {
    const thread = await controls.spawn({
      task: `work on ${label}`,
      name: label,
      kernel: { type: 'scripted', turns: [[{ type: 'tool', tool: 'slow', input: { ms: 120_000, label } }]] },
    });
    await eventually(
      async () => slow.started,
      (started) => started.includes(label),
      `${label} to start`,
    );
    return thread;
  };
  const first = await busy(`first-${service.rootThreadId.slice(-6)}`);
  const receipt = await runCli(['interrupt', service.rootThreadId, first.id], withKey);
  expect(receipt.code).toBe(0);
  expect(receipt.stdout.trim()).toBe(`interrupt requested for ${first.id} (turn 1 cancelled)`);
  expect((await untilTurns(service, first.id, 1)).latestTurn?.status).toBe('interrupted');

  const second = await busy(`second-${service.rootThreadId.slice(-6)}`);
  // The plain signal needs no capability (an operator's), only a thread of the run named.
  const elsewhere = await runCli(['interrupt', goodRoot, second.id, '--signal'], env);
  expect([elsewhere.code, elsewhere.stderr.trim()]).toEqual([
    1,
    `agents-kit: NotFound: thread ${second.id} is not part of root run ${goodRoot}`,
  ]);
  const signalled = await runCli(['interrupt', service.rootThreadId, second.id, '--signal'], env);
  expect(signalled.code).toBe(0);
  expect(signalled.stdout.trim()).toBe(`interrupt signal sent to ${second.id}`);
  const after = await untilTurns(service, second.id, 1);
  expect(after.latestTurn?.status).toBe('interrupted');
  expect(after.status).toBe('idle');
  await service.shutdown();
});

const badRoot = 'thread_NOT-A-THREAD';
const goodRoot = newId('thread', randomUUID);
test.each([
  ['run', ['run', 'task', '--root-id', badRoot], ['run', 'task', '--frobnicate']],
  ['tree', ['tree', badRoot], ['tree', goodRoot, '--frobnicate']],
  ['send', ['send', badRoot, goodRoot, 'hi'], ['send', goodRoot, goodRoot, 'hi', '--frobnicate']],
  ['interrupt', ['interrupt', badRoot, goodRoot], ['interrupt', goodRoot, goodRoot, '--frobnicate']],
  ['shutdown', ['shutdown', badRoot], ['shutdown', goodRoot, '--frobnicate']],
  [
    'reconcile',
    ['reconcile', badRoot, '--request', '{}'],
    ['reconcile', goodRoot, '--request', '{}', '--frobnicate'],
  ],
  ['worker', ['worker', '--task-queue', 'bad queue'], ['worker', '--frobnicate']],
  ['dev', ['dev', '--port', 'http'], ['dev', '--frobnicate']],
])(
  '%s: bad input is one Protocol line with exit 1; an unknown option exits 2',
  async (_name, bad, unknown) => {
    const [invalid, usage] = await Promise.all([runCli(bad, env), runCli(unknown, env)]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^agents-kit: Protocol: \S.*\n$/);
    expect(invalid.stderr).toMatch(/rootId|--task-queue|AGENTS_KIT_TASK_QUEUE|--port/);
    expect(invalid.stdout).toBe('');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^agents-kit: usage: unknown option '--frobnicate'/);
  },
);

test('errors of the operation itself are one KitError line: bad JSON, a run that does not exist', async () => {
  const [badJson, missing, badMessage] = await Promise.all([
    runCli(['reconcile', goodRoot, '--request', '{not json'], env),
    runCli(['tree', goodRoot], { ...env, AGENTS_KIT_CAPABILITY: 'a'.repeat(64) }),
    runCli(['send', goodRoot, 'thread_x', 'hi'], env),
  ]);
  expect(badJson).toMatchObject({ code: 1, stdout: '' });
  expect(badJson.stderr).toMatch(/^agents-kit: Protocol: --request: not valid JSON/);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe(`agents-kit: NotFound: no root run ${goodRoot}\n`);
  expect(badMessage.stderr).toMatch(/^agents-kit: Protocol: threadId: "thread_x" is not a thread id/);
});

test('worker: polls the configured task queue and stops cleanly on SIGTERM', async () => {
  const queue = uniqueTaskQueue('cli-worker');
  const worker = startCli(['worker', '--workflow-bundle', workflowBundlePath()], {
    ...env,
    AGENTS_KIT_TASK_QUEUE: queue,
  });
  try {
    await untilOutput(worker, new RegExp(`worker polling task queue ${queue}`));
    const service = await attachRun(temporal.client, queue, { root: { task: 'answer', name: 'root' } });
    const root = await untilTurns(service, service.rootThreadId, 1);
    expect(root.latestTurn?.result).toBe('(scripted) answer');
    await service.complete();
  } finally {
    worker.kill('SIGTERM');
  }
  const result = await worker.done;
  expect(result.code).toBe(0);
  expect(result.stderr).toContain('worker stopped');
});

test('dev: starts a dev server with the search attributes and a worker, prints addresses, stops on SIGINT', async () => {
  const port = await freePort();
  const dev = startCli(
    [
      'dev',
      '--port',
      String(port),
      '--headless',
      '--json',
      '--db-file',
      join(process.env.AGENTS_KIT_TEST_DIR!, `cli-dev-${port}.sqlite`),
      '--workflow-bundle',
      workflowBundlePath(),
    ],
    {},
  );
  try {
    await untilOutput(dev, /stop with Ctrl-C/);
    const ready = parsed<{ address: string; taskQueue: string; uiAddress: string | null }>(
      dev.output().stdout,
    );
    expect(ready).toMatchObject({ address: `127.0.0.1:${port}`, taskQueue: 'agents-kit', uiAddress: null });
    const run = await runCli(['run', 'hello dev', '--agents', 'solo', '--json'], {
      TEMPORAL_ADDRESS: ready.address,
    });
    expect(run.code).toBe(0);
    expect(parsed<TreeJson>(run.stdout).threads.map((thread) => thread.path)).toEqual([
      '/root',
      '/root/solo',
    ]);
  } finally {
    dev.kill('SIGINT');
  }
  const result = await dev.done;
  expect(result.code).toBe(0);
  expect(result.stderr).toContain('dev server stopped');
});

test('watch receives a conversation (interactions show their request id) and resolve answers one', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const asker = await service.rootControls().spawn({
    task: 'ask',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'Ship it?' },
          { type: 'reply', text: '{{last}}' },
        ],
      ],
    },
  });
  const rootConversation = (await service.refreshRoot()).conversationId;
  const unproven = await runCli(['watch', rootConversation, '--idle-exit', '2500'], env);
  expect(unproven.code).not.toBe(0);
  expect(unproven.stderr).toContain('PermissionDenied');
  const watched = await runCli(['watch', rootConversation, '--json', '--idle-exit', '2500'], {
    ...env,
    AGENTS_KIT_CAPABILITY: service.capability,
  });
  expect(watched.code).toBe(0);
  const items = watched.stdout
    .trim()
    .split('\n')
    .map(
      (line) =>
        JSON.parse(line) as {
          seq: number;
          body: { type: string; requestId?: string; threadId?: string; prompt?: string };
        },
    );
  expect(items.map((item) => item.seq)).toEqual([...items.map((item) => item.seq)].sort((a, b) => a - b));
  const interaction = items.find((item) => item.body.type === 'interaction')!;
  expect(interaction.body).toMatchObject({ threadId: asker.id, prompt: 'Ship it?' });
  // Answering acts for the root (SPEC S3.9): without its capability resolve is refused.
  const without = await runCli(['resolve', asker.id, interaction.body.requestId!, '--approve'], env);
  expect(without.stderr).toMatch(/PermissionDenied: acting on root .* needs its capability/);
  const resolved = await runCli(['resolve', asker.id, interaction.body.requestId!, '--approve'], {
    ...env,
    AGENTS_KIT_CAPABILITY: service.capability,
  });
  expect(resolved.code).toBe(0);
  expect(resolved.stdout).toContain(`resolved ${interaction.body.requestId}`);
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('approved');
  // Bad arguments: one Protocol line and exit 1, changing nothing.
  const wrongPrefix = await runCli(['watch', asker.id], env);
  expect(wrongPrefix.code).toBe(1);
  expect(wrongPrefix.stderr).toMatch(/^agents-kit: Protocol: conversationId: /m);
  const both = await runCli(['resolve', asker.id, interaction.body.requestId!, '--approve', '--deny'], env);
  expect(both.code).toBe(1);
  expect(both.stderr).toMatch(/Protocol: resolve: give exactly one of/);
});

test("run --model --yes streams the root conversation and approves the writer's publish", async () => {
  const result = await runCli(
    ['run', 'brief on durable agents', '--model', '--yes', '--max-depth', '2'],
    env,
  );
  expect(result.code).toBe(0);
  expect(result.stderr).toMatch(
    /approval request_[0-9a-f]{32} from thread_[0-9a-f]{32}: \/root\/writer wants to run publish/,
  );
  expect(result.stderr).toContain('approved automatically');
  expect(result.stdout).toMatch(/^root: \(scripted model\) Done: brief on durable agents/m);
  // SPEC S10.1: the writer's answer (after the approval, so it is followed by then) printed as it streamed.
  expect(result.stderr).toMatch(/^\/root\/writer ▸ \(scripted/m);
});

test("watch --tree shows the run live: the tree stream after each agent's path, and each agent's output as it streams", async () => {
  const run = await runCli(['run', 'watch me work', '--model', '--yes', '--keep', '--json'], env);
  expect(run.code).toBe(0);
  const { rootThreadId, threads, capability } = parsed<TreeJson & { capability: string }>(run.stdout);
  const withKey = { ...env, AGENTS_KIT_CAPABILITY: capability };
  const researcher = threads.find((thread) => thread.path === '/root/researcher')!;
  const watch = startCli(['watch', '--tree', rootThreadId, '--yes'], withKey);
  try {
    await untilOutput(watch, /approvals: approved automatically/);
    // Once the watcher follows the researcher (its conversation says it is watched), its next turn streams.
    const conversation = temporal.client.workflow.getHandle(relatedId('conversation', researcher.id));
    await eventually(
      async () => (await conversation.describe()).memo?.[liveWatchedMemoKey],
      Boolean,
      'the researcher watched',
    );
    const sent = await runCli(['send', rootThreadId, researcher.id, 'one more thing', '--trigger'], withKey);
    expect(sent.code).toBe(0);
    await untilOutput(watch, /^\/root\/researcher ▸ \(scripted model\) \/root\/researcher noted/m);
    // The tree stream (SPEC S10.2): from the run's start, each event after its agent's path.
    await untilOutput(watch, /^\/root\/researcher ← \/root #1: one more thing$/m);
    const { stdout } = watch.output();
    expect(stdout).toMatch(/^\/root child-spawned \(\/root\/researcher\)$/m);
    expect(stdout).toMatch(/^\/root\/writer asks \(approval request_[0-9a-f]{32}\): /m);
    expect(stdout).toMatch(/^\/root\/writer request_[0-9a-f]{32} approved$/m);
    expect(stdout.indexOf('/root child-spawned (/root/researcher)')).toBeLessThan(
      stdout.indexOf('/root/researcher turn-start'),
    );
    // The message that started the researcher's second turn is received before that turn starts.
    await untilOutput(watch, /^\/root\/researcher turn-start \(turn 2\)$/m);
    const later = watch.output().stdout;
    expect(later.indexOf('/root/researcher ← /root #1: one more thing')).toBeLessThan(
      later.indexOf('/root/researcher turn-start (turn 2)'),
    );
  } finally {
    watch.kill('SIGINT');
    const shown = await watch.done;
    // Kept for people: what watch --tree printed (test-output/ is not committed).
    mkdirSync(join(projectRoot, 'test-output'), { recursive: true });
    writeFileSync(
      join(projectRoot, 'test-output', 'watch-tree-output.txt'),
      `${shown.stdout}\n--- stderr ---\n${shown.stderr}`,
    );
  }
  expect((await runCli(['shutdown', rootThreadId], withKey)).code).toBe(0);
});

test('--help lists every command; no command at all is a usage error (exit 2, help on stderr)', async () => {
  expect(await runCli([])).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/^Usage:/) });
  const help = await runCli(['--help']);
  expect(help.code).toBe(0);
  const commands = [...help.stdout.matchAll(/^ {2}(\w+) /gm)].map((match) => match[1]);
  expect(commands).toEqual(
    'dev worker run tree usage policy send interrupt shutdown reconcile watch resolve help'.split(' '),
  );
});

test('an unreachable server, or something else there, is one Integration line naming the address', async () => {
  // An HTTP/2 server answering 404, as a proxy or web server at a wrong address does.
  const web = createHttp2Server((_, response) => response.writeHead(404).end());
  await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
  const elsewhere = `127.0.0.1:${(web.address() as AddressInfo).port}`;
  const nobody = `127.0.0.1:${await freePort()}`;
  try {
    for (const [command, address, why] of [
      ['tree', nobody, /: no answer within 3 s/],
      ['worker', nobody, /: connection refused; is it running\?/],
      ['tree', elsewhere, /: something answers there, but not as Temporal/],
      ['worker', elsewhere, /: something answers there, but not as Temporal/],
    ] as const) {
      const args = command === 'tree' ? ['tree', goodRoot] : ['worker'];
      const result = await runCli([...args, '--address', address], {}, 30_000);
      expect(result.code).toBe(1);
      // One line says why (the worker notes its start before it).
      const last = result.stderr.trim().split('\n').at(-1);
      expect(last).toMatch(`agents-kit: Integration: cannot reach Temporal at ${address}: `);
      expect(last).toMatch(why);
    }
  } finally {
    web.close();
  }
}, 180_000);
