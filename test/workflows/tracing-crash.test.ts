// SPEC S11.2 and S7.1: tracing is safe under replay. The worker is the product's own (`agents-kit worker`,
// configured by OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_SERVICE_NAME) in a child process, SIGKILLed while a
// thread waits for an approval; its successor replays every workflow from history and must not export
// any span a second time, while the turn that was running across the crash is exported once, whole.
// Then the run's histories, recorded with tracing on, replay without tracing (and the golden histories,
// recorded without it, replay with it: test/workflows/replay.test.ts), so a fleet can turn it on or off.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { resolveNotification } from '../../client/conversations';
import { ThreadService } from '../../client/thread-service';
import { bundleOptions } from '../../workers/create-worker';
import type { ConversationNotification } from '../../domain/schemas';
import { runCli, untilOutput, watchProcess, type CliProcess } from '../helpers/cli';
import { startCollector, type Collector } from '../helpers/otel-collector';
import { dataDir, projectRoot } from '../helpers/paths';
import { eventually, untilTurns } from '../helpers/runs';
import { testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { TraceTree } from '../helpers/trace-tree';

const collectorDir = join(dataDir, `collector-crash-${process.pid}`);
let connection: Connection;
let collector: Collector;
let worker: CliProcess | undefined;
/** The workflows of the crash test's run, for the replay test. */
const recorded: string[] = [];

beforeAll(async () => {
  collector = await startCollector(collectorDir);
  connection = await connectTest({ address: testServerAddress() });
}, 1_200_000);
afterAll(async () => {
  await stopWorker('SIGKILL');
  await connection?.close();
  await collector?.stop();
  if (!process.env.AGENTS_KIT_KEEP_TEST_DATA) rmSync(collectorDir, { recursive: true, force: true });
});

/** `agents-kit worker` as a user runs it, exporting to the collector; resolves once it polls. */
async function startWorker(taskQueue: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [join(projectRoot, 'dist', 'workers', 'cli.js'), 'worker', '--workflow-bundle', workflowBundlePath()],
    {
      cwd: projectRoot,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: testServerAddress(),
        AGENTS_KIT_TASK_QUEUE: taskQueue,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_SERVICE_NAME: 'agents-kit-crash-worker',
      },
    },
  );
  worker = watchProcess(child);
  await untilOutput(worker, /worker polling task queue/, 120_000);
}

async function stopWorker(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const child = worker;
  worker = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await child.done;
}

async function nextInteraction(
  receiver: ConversationNotificationReceiver,
): Promise<ConversationNotification> {
  for (;;) {
    const item = await receiver.recv();
    if (!item) throw new Error('the conversation ended before an interaction arrived');
    if (item.body.type === 'interaction') return item;
  }
}

test('a worker SIGKILLed mid-turn and replayed by its successor exports every span exactly once', async () => {
  const taskQueue = uniqueTaskQueue('tracing-crash');
  await startWorker(taskQueue);
  const client = new Client({ connection });
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    grant: { owner: 'tests', idleTimeoutMs: 600_000 },
    root: {
      task: 'ask before going on',
      name: 'root',
      kernel: {
        type: 'scripted',
        turns: [
          [
            {
              type: 'spawn',
              as: 'asker',
              request: {
                task: 'ask first',
                name: 'asker',
                kernel: {
                  type: 'scripted',
                  turns: [
                    [
                      { type: 'tool', tool: 'echo', input: 'before' },
                      { type: 'ask', kind: 'approval', prompt: 'May I go on?' },
                      { type: 'tool', tool: 'echo', input: 'after' },
                      { type: 'reply', text: 'went on: {{last}}' },
                    ],
                    [{ type: 'reply', text: 'heard {{inbox}}' }],
                  ],
                },
              },
            },
            { type: 'reply', text: 'spawned' },
          ],
        ],
      },
    },
  });
  const root = await service.refreshRoot();
  const receiver = await ConversationNotificationReceiver.open(client, root.conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  const approval = await nextInteraction(receiver);
  const asker = (await service.rootControls().listThreads()).find((thread) => thread.name === 'asker')!;
  // What ended before the crash has reached the collector: the root's turn, the spawn, the first tool call.
  await eventually(
    async () => new TraceTree(collector.spans()),
    (tree) =>
      tree.ofType('turn', { 'gen_ai.agent.id': root.id }).length === 1 &&
      tree.ofType('create-agent').length === 1 &&
      tree.ofType('tool-call', { 'gen_ai.agent.id': asker.id }).length === 1,
    'the spans that ended before the crash',
    60_000,
  );
  await receiver.dispose();
  await stopWorker('SIGKILL');
  await startWorker(taskQueue);
  // The successor has no workflow in its cache: the answer makes it replay the asker from history.
  await resolveNotification(
    client,
    approval,
    { type: 'approval', approved: true },
    {
      capability: service.rootCapability,
    },
  );
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('went on: after');
  // The CLI traces too (configured the same way): its message is linked from the asker's receive span.
  const sent = await runCli(['send', root.id, asker.id, 'thanks', '--trigger'], {
    TEMPORAL_ADDRESS: testServerAddress(),
    AGENTS_KIT_CAPABILITY: service.capability,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_SERVICE_NAME: 'agents-kit-cli-test',
  });
  expect(sent.code).toBe(0);
  expect((await untilTurns(service, asker.id, 2)).latestTurn?.result).toBe('heard thanks');
  await service.shutdown();
  recorded.push(root.id, asker.id);

  // Stopped as an operator stops it, the worker flushes its spans before it exits.
  const stopping = worker!;
  await stopWorker('SIGTERM');
  expect((await stopping.done).code).toBe(0);
  const trace = new TraceTree(await collector.settledSpans());
  expect(trace.ofType('root-run')).toHaveLength(1);
  expect(trace.ofType('thread')).toHaveLength(1);
  expect(trace.duplicates()).toEqual([]);
  expect(trace.orphans()).toEqual([]);
  // Attached by an untraced client, the tree's trace id is its root id's hex digits.
  expect(trace.one('root-run').traceId).toBe(root.id.slice('thread_'.length));
  expect(trace.ofType('turn', { 'gen_ai.agent.id': root.id })).toHaveLength(1);
  expect(trace.ofType('create-agent')).toHaveLength(1);
  // The turn that was waiting for the answer when the worker died: one span, asked before, answered after.
  const turn = trace.one('turn', { 'gen_ai.agent.id': asker.id, 'agents_kit.turn': 1 });
  expect(turn.events.map((event) => event.name)).toEqual(['approval-request', 'approval-response']);
  const tools = trace.ofType('tool-call', { 'gen_ai.agent.id': asker.id });
  expect(tools).toHaveLength(2);
  expect(tools.every((span) => trace.parentOf(span)?.spanId === turn.spanId)).toBe(true);
  expect(trace.lineage(turn)).toEqual(['turn', 'thread', 'create-agent', 'turn', 'root-run']);
  const cliSend = trace.one('message-send', { 'agents_kit.message.recipient': asker.id });
  expect(cliSend.serviceName).toBe('agents-kit-cli-test');
  const received = trace.one('message-receive', { 'agents_kit.message.recipient': asker.id });
  expect(received.links).toEqual([expect.objectContaining({ spanId: cliSend.spanId })]);
  expect(received.serviceName).toBe('agents-kit-crash-worker');
}, 300_000);

test('histories recorded with tracing on replay on workers without it', async () => {
  expect(recorded).toHaveLength(2);
  const client = new Client({ connection });
  const histories = await Promise.all(
    recorded.map(async (workflowId) => ({
      workflowId,
      history: await client.workflow.getHandle(workflowId).fetchHistory(),
    })),
  );
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
  const untraced = await bundleWorkflowCode({
    ...bundleOptions,
    workflowInterceptorModules: [],
    logger: quiet,
  });
  for (const workflowBundle of [untraced, { codePath: workflowBundlePath() }]) {
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle }, histories))
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    expect(failures).toEqual([]);
  }
}, 300_000);
