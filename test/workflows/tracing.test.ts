// SPEC S11.2: the spans of a tree, as a real OpenTelemetry Collector receives them over OTLP. A root run
// spawns a model-kernel writer (scripted model: word_count, then publish, which needs approval) and a
// messenger that messages the root; a client attaches the run and sends the writer a message. The
// collector must hold one connected tree: attach → root run → turn → create_agent → thread → turn →
// model and tool calls; the approval as events of the writer's turn; each message as a link.
import { Client } from '@temporalio/client';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { resolveNotification } from '../../client/conversations';
import { ThreadService } from '../../client/thread-service';
import { tracingInterceptors } from '../../client/trace-interceptors';
import { createTracing, type Tracing } from '../../client/tracing';
import { createActivities } from '../../activities';
import { createAgentWorker } from '../../workers/create-worker';
import type { ConversationNotification } from '../../domain/schemas';
import { startCollector, type Collector } from '../helpers/otel-collector';
import { dataDir } from '../helpers/paths';
import { eventually, untilTurns } from '../helpers/runs';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';
import { TraceTree } from '../helpers/trace-tree';

const collectorDir = join(dataDir, `collector-${process.pid}`);
let temporal: TestTemporal;
let collector: Collector;
let tracing: Tracing;

beforeAll(async () => {
  // The first run on a machine builds the collector from its Go modules (minutes: printed as it goes).
  collector = await startCollector(collectorDir);
  tracing = await createTracing({
    endpoint: `${collector.endpoint}/v1/traces`,
    serviceName: 'agents-kit-tracing-test',
    scheduledDelayMs: 200,
  });
  temporal = await connectTestTemporal();
}, 1_200_000);
afterAll(async () => {
  await temporal?.close();
  await tracing?.shutdown();
  await collector?.stop();
  if (!process.env.AGENTS_KIT_KEEP_TEST_DATA) rmSync(collectorDir, { recursive: true, force: true });
});

async function nextInteraction(
  receiver: ConversationNotificationReceiver,
): Promise<ConversationNotification> {
  for (;;) {
    const item = await receiver.recv();
    if (!item) throw new Error('the conversation ended before an interaction arrived');
    if (item.body.type === 'interaction') return item;
  }
}

test('a tree traces as one connected trace: threads, turns, model and tool calls, approvals as events, messages as links', async () => {
  const taskQueue = uniqueTaskQueue('tracing');
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    activities: createActivities(),
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
    tracing,
  });
  const running = worker.run();
  try {
    const client = new Client({
      connection: temporal.client.connection,
      interceptors: tracingInterceptors(tracing.tracer),
    });
    const service = await ThreadService.attach(client, {
      taskQueue,
      owner: 'tests',
      grant: { owner: 'tests', idleTimeoutMs: 600_000 },
      root: {
        task: 'publish a launch note',
        name: 'root',
        kernel: {
          type: 'scripted',
          turns: [
            [
              {
                type: 'spawn',
                as: 'writer',
                request: {
                  task: 'write the launch note',
                  name: 'writer',
                  kernel: { type: 'model' },
                  tools: ['word_count', 'publish'],
                },
              },
              {
                type: 'spawn',
                as: 'messenger',
                request: {
                  task: 'tell the root',
                  name: 'messenger',
                  kernel: {
                    type: 'scripted',
                    turns: [
                      [
                        { type: 'send', to: 'parent', content: 'the note is on its way', triggerTurn: true },
                        { type: 'reply', text: 'told' },
                      ],
                    ],
                  },
                },
              },
              { type: 'reply', text: 'delegated' },
            ],
            [{ type: 'reply', text: 'heard: {{inbox}}' }],
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
    await resolveNotification(
      client,
      approval,
      { type: 'approval', approved: true },
      {
        capability: service.rootCapability,
      },
    );
    const threads = await eventually(
      () => service.rootControls().listThreads(),
      (list) => list.length === 3,
      'the writer and the messenger',
    );
    const writer = threads.find((thread) => thread.name === 'writer')!;
    const messenger = threads.find((thread) => thread.name === 'messenger')!;
    await untilTurns(service, writer.id, 1);
    await untilTurns(service, root.id, 2);
    // A client's message to the writer: linked from the writer's receive span.
    await service.rootControls().sendMessage({ recipient: writer.id, content: 'thanks', triggerTurn: true });
    await untilTurns(service, writer.id, 2);
    await service.shutdown();
    await eventually(
      async () => new TraceTree(collector.spans()),
      (tree) => tree.ofType('root-run', { 'gen_ai.agent.id': root.id }).length > 0,
      'the root run at the collector',
      60_000,
    );
    // Before the worker stops: a receiver's release is an update the worker must answer.
    await receiver.dispose();
    worker.shutdown();
    await running;
    await tracing.forceFlush();

    // Everything is at the collector: the root run's span (ended with the run) and every parent span.
    const trace = new TraceTree(await collector.settledSpans());
    expect(trace.ofType('root-run')).toHaveLength(1);
    expect(trace.ofType('thread')).toHaveLength(2);
    expect(trace.orphans()).toEqual([]);
    expect(trace.duplicates()).toEqual([]);
    const treeTrace = trace.one('root-run').traceId;
    const spans = new TraceTree(trace.spans.filter((span) => span.traceId === treeTrace));
    const attach = spans.one('attach');
    const rootRun = spans.one('root-run');
    expect(spans.parentOf(rootRun)?.spanId).toBe(attach.spanId);
    expect(rootRun.attributes).toMatchObject({
      'gen_ai.agent.id': root.id,
      'agents_kit.run.end': 'completed',
    });

    const writerThread = spans.one('thread', { 'gen_ai.agent.id': writer.id });
    expect(spans.lineage(writerThread)).toEqual(['thread', 'create-agent', 'turn', 'root-run', 'attach']);
    const writerTurns = spans.ofType('turn', { 'gen_ai.agent.id': writer.id });
    expect(writerTurns.map((span) => span.attributes['agents_kit.turn']).sort()).toEqual([1, 2]);
    const firstTurn = spans.one('turn', { 'gen_ai.agent.id': writer.id, 'agents_kit.turn': 1 });
    expect(spans.parentOf(firstTurn)?.spanId).toBe(writerThread.spanId);
    expect(firstTurn.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent' });

    // Model calls and tool calls are children of the turn that made them, with GenAI attributes.
    const modelCalls = spans
      .ofType('model-call')
      .filter((span) => spans.parentOf(span)?.spanId === firstTurn.spanId);
    expect(modelCalls.length).toBe(3);
    for (const call of modelCalls) {
      expect(call.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.response.model': 'agents-kit-scripted',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.agent.id': writer.id,
      });
      expect(call.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(call.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(call.name).toBe('chat agents-kit-scripted');
    }
    const tools = spans
      .ofType('tool-call')
      .filter((span) => spans.parentOf(span)?.spanId === firstTurn.spanId);
    expect(tools.map((span) => span.attributes['gen_ai.tool.name'])).toEqual(
      expect.arrayContaining(['word_count', 'publish']),
    );
    expect(tools.every((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool')).toBe(true);

    // The approval: asked and answered, as events of the writer's turn.
    expect(firstTurn.events.map((event) => event.name)).toEqual(['approval-request', 'approval-response']);
    expect(firstTurn.events[0]!.attributes).toMatchObject({ 'gen_ai.tool.name': 'publish' });
    expect(firstTurn.events[1]!.attributes).toMatchObject({ 'agents_kit.approval.approved': true });

    // The person's answer came from a client request of another trace: a span of the writer, linked to it.
    const resolved = spans.one('request', { 'agents_kit.operation': 'resolve-interaction' });
    expect(spans.parentOf(resolved)?.spanId).toBe(writerThread.spanId);
    const answer = trace.one('client-update', { 'agents_kit.operation': 'resolve-interaction' });
    expect(resolved.links).toEqual([expect.objectContaining({ spanId: answer.spanId })]);

    // The messenger's message to the root: a send span in the messenger's turn, linked from the root.
    const messengerTurn = spans.one('turn', { 'gen_ai.agent.id': messenger.id });
    const sent = spans.one('message-send', { 'agents_kit.message.recipient': root.id });
    expect(spans.parentOf(sent)?.spanId).toBe(messengerTurn.spanId);
    const heard = spans.one('message-receive', { 'agents_kit.message.sender': messenger.id });
    expect(spans.parentOf(heard)?.spanId).toBe(rootRun.spanId);
    expect(heard.links).toEqual([expect.objectContaining({ spanId: sent.spanId, traceId: sent.traceId })]);
    // The client's message to the writer: its send span, linked from the writer's receive span.
    const clientSend = trace.one('message-send', { 'agents_kit.message.recipient': writer.id });
    expect(clientSend.serviceName).toBe('agents-kit-tracing-test');
    const writerHeard = spans
      .ofType('message-receive')
      .find((span) => spans.parentOf(span)?.spanId === writerThread.spanId);
    expect(writerHeard?.links).toEqual([expect.objectContaining({ spanId: clientSend.spanId })]);
  } finally {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  }
}, 240_000);

test('a thread that continues as new: one span per run, each linked to the one before, all under its spawn', async () => {
  const taskQueue = uniqueTaskQueue('tracing-can');
  // No workflow source given: a worker given `tracing` bundles its workflows with the tracing
  // interceptors (a worker without it does not: dist/workflow-bundle-untraced.js).
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    activities: createActivities(),
    tracing,
  });
  const running = worker.run();
  try {
    const client = new Client({
      connection: temporal.client.connection,
      interceptors: tracingInterceptors(tracing.tracer),
    });
    const service = await ThreadService.attach(client, {
      taskQueue,
      owner: 'tests',
      grant: { owner: 'tests', idleTimeoutMs: 600_000 },
      root: {
        task: 'host',
        name: 'root',
        kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'ok' }]] },
      },
      continueAsNewAfterEvents: 100,
    });
    const talker = await service.rootControls().spawn({
      task: 'talk',
      name: 'talker',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'heard {{inbox}}' }]] },
    });
    const runs = async () => {
      let count = 0;
      for await (const _ of client.workflow.list({ query: `WorkflowId = "${talker.id}"` })) count++;
      return count;
    };
    let turns = 1;
    await untilTurns(service, talker.id, turns);
    while ((await runs()) < 3 && turns < 60) {
      await service
        .rootControls()
        .sendMessage({ recipient: talker.id, content: `m${turns}`, triggerTurn: true });
      await untilTurns(service, talker.id, ++turns);
    }
    expect(await runs()).toBeGreaterThanOrEqual(3);
    await service.shutdown();
    await eventually(
      async () => new TraceTree(collector.spans()),
      (tree) =>
        tree.ofType('thread', { 'gen_ai.agent.id': talker.id, 'agents_kit.run.end': 'completed' }).length > 0,
      'the talker’s last run at the collector',
      60_000,
    );
    worker.shutdown();
    await running;
    await tracing.forceFlush();
    const trace = new TraceTree(await collector.settledSpans());
    expect(trace.duplicates()).toEqual([]);
    expect(trace.orphans()).toEqual([]);
    const threadRuns = trace
      .ofType('thread', { 'gen_ai.agent.id': talker.id })
      .sort((first, second) => Number(BigInt(first.startTimeUnixNano) - BigInt(second.startTimeUnixNano)));
    expect(threadRuns.length).toBe(await runs());
    const spawn = trace.one('create-agent', { 'gen_ai.agent.id': talker.id });
    threadRuns.forEach((run, index) => {
      expect(run.parentSpanId).toBe(spawn.spanId);
      expect(run.attributes['agents_kit.run.end']).toBe(
        index === threadRuns.length - 1 ? 'completed' : 'continued-as-new',
      );
      expect(run.links).toEqual(
        index === 0 ? [] : [expect.objectContaining({ spanId: threadRuns[index - 1]!.spanId })],
      );
    });
    // Every turn once, under the run that played it.
    const talkerTurns = trace.ofType('turn', { 'gen_ai.agent.id': talker.id });
    expect(
      talkerTurns.map((span) => span.attributes['agents_kit.turn']).sort((a, b) => Number(a) - Number(b)),
    ).toEqual(Array.from({ length: turns }, (_, index) => index + 1));
    const runIds = new Set(threadRuns.map((run) => run.spanId));
    expect(talkerTurns.every((span) => runIds.has(span.parentSpanId))).toBe(true);
  } finally {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  }
}, 300_000);
