// SPEC S10.1: a model call's text reaches watchers as it is generated, through the thread's conversation,
// without a delta in the agent's history; late watchers get the text so far; nobody watching costs nothing.
import { createActivities } from '../../activities';
import type { ThreadService } from '../../client/thread-service';
import type { LiveOutputEvent } from '../../client/live-output';
import { mintCapability } from '../../domain/capability';
import { liveOutputSignal, watchOutputUpdate } from '../../domain/conversation-messages';
import { relatedId } from '../../domain/ids';
import { kitCall } from '../../client/errors';
import { conversationSummary } from '../../client/conversations';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { patchesOf } from '../helpers/histories';
import { providerFor, startOpenAIServer, type ReceivedRequest, type Reply } from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
let policy: (request: ReceivedRequest) => Reply = () => ({ text: 'unset' });
const taskQueue = uniqueTaskQueue('live');

beforeAll(async () => {
  server = await startOpenAIServer((request) => policy(request));
  temporal = await connectTestTemporal();
  const model = providerFor(server.url);
  await temporal.startWorker({ taskQueue, activities: createActivities({ model, tools: [] }) });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});
beforeEach(() => server.requests.splice(0));

const words = (count: number, tag = 'w') => Array.from({ length: count }, (_, n) => `${tag}${n}`).join(' ');

/** Collects a thread's live output in the background until `until` says so (or the test aborts it). */
function watch(service: ThreadService, threadId: string, until: (events: LiveOutputEvent[]) => boolean) {
  const controller = new AbortController();
  const events: LiveOutputEvent[] = [];
  const done = (async () => {
    for await (const event of service.watchOutput(threadId, {
      signal: controller.signal,
      pollWaitMs: 5_000,
    })) {
      events.push(event);
      if (until(events)) break;
    }
  })();
  return { events, done, stop: () => controller.abort() };
}
const textOf = (events: LiveOutputEvent[]) =>
  events.flatMap((event) => (event.type === 'text' ? [event.text] : [])).join('');
const ended = (events: LiveOutputEvent[]) => events.some((event) => event.type === 'end');

async function historyOf(workflowId: string) {
  return (await temporal.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}
type HistoryEvent = Awaited<ReturnType<typeof historyOf>>[number];
const isTaskBookkeeping = (event: HistoryEvent) =>
  Boolean(
    event.workflowTaskScheduledEventAttributes ??
    event.workflowTaskStartedEventAttributes ??
    event.workflowTaskCompletedEventAttributes ??
    event.workflowTaskTimedOutEventAttributes ??
    event.workflowTaskFailedEventAttributes,
  );
async function liveSignalsOf(threadId: string): Promise<number> {
  const events = await historyOf(relatedId('conversation', threadId));
  return events.filter(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'live-output',
  ).length;
}

/** Spawns a model thread and waits until its conversation is there to watch. */
async function spawnModelThread(service: ThreadService, task: string) {
  const thread = await service.rootControls().spawn({ task, kernel: { type: 'model' } });
  await eventually(
    () => temporal.client.workflow.getHandle(relatedId('conversation', thread.id)).describe(),
    () => true,
    'the thread’s conversation',
  );
  return thread;
}

test('a watcher sees the text in batches, in order, as it streams; the agent history has no delta', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const kinds: Record<number, string[]> = {};
  for (const length of [10, 120]) {
    // Held before the first byte until the watcher is there, then a word every 10 ms.
    policy = () => ({ text: words(length), delayMs: 1_500, chunkDelayMs: 10 });
    const thread = await spawnModelThread(service, `say ${length} words`);
    const watcher = watch(service, thread.id, ended);
    await watcher.done;
    expect(textOf(watcher.events)).toBe(words(length));
    expect(watcher.events.at(-1)).toMatchObject({
      type: 'end',
      end: 'finished',
      length: words(length).length,
    });
    expect(watcher.events[0]).toMatchObject({
      type: 'text',
      started: true,
      offset: 0,
      call: { turn: 1, step: 0 },
    });
    const idle = await untilTurns(service, thread.id, 1);
    expect(idle.latestTurn).toMatchObject({ status: 'completed', result: words(length) });
    // Batched: far fewer flushes than deltas (one word each).
    const signals = await liveSignalsOf(thread.id);
    expect(signals).toBeGreaterThanOrEqual(1);
    if (length === 120) expect(signals).toBeLessThan(length / 2);
    kinds[length] = (await historyOf(thread.id))
      .filter((event) => !isTaskBookkeeping(event))
      .map((event) => String(event.eventType))
      .sort();
  }
  // The agent's own history is the same whatever the call streamed. Workflow task events are left
  // out: a task retried on a loaded machine (a sticky queue's timeout, a signal landing during a
  // task) adds some to either run, and none of them carries output.
  expect(kinds[120]).toEqual(kinds[10]);
});

test('a watcher that connects mid-call gets the text so far, then the rest; after the call, the whole text', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const text = words(80, 'm');
  policy = () => ({ text, delayMs: 1_500, chunkDelayMs: 40 });
  const thread = await spawnModelThread(service, 'stream for two watchers');
  const first = watch(service, thread.id, ended);
  await eventually(
    async () => textOf(first.events).length,
    (length) => length >= 60,
    'some text streamed',
  );
  const second = watch(service, thread.id, ended);
  await Promise.all([first.done, second.done]);
  expect(textOf(first.events)).toBe(text);
  expect(textOf(second.events)).toBe(text);
  expect(second.events[0]).toMatchObject({ type: 'text', started: true, offset: 0 });
  expect((second.events[0] as { text: string }).text.length).toBeGreaterThanOrEqual(60);
  expect((second.events[0] as { text: string }).text.length).toBeLessThan(text.length);
  await untilTurns(service, thread.id, 1);
  const late = watch(service, thread.id, ended);
  await late.done;
  expect(late.events).toEqual([
    expect.objectContaining({ type: 'text', text, started: true }),
    expect.objectContaining({ type: 'end', end: 'finished' }),
  ]);
});

test('a call nobody watches sends nothing to its conversation', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  policy = () => ({ text: words(40), chunkDelayMs: 5 });
  const thread = await spawnModelThread(service, 'stream to nobody');
  await untilTurns(service, thread.id, 1);
  expect(await liveSignalsOf(thread.id)).toBe(0);
});

test('interrupting a streaming turn stops the stream and the provider request', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const text = words(400, 'i');
  policy = () => ({ text, delayMs: 1_500, chunkDelayMs: 50 });
  const thread = await spawnModelThread(service, 'stream until interrupted');
  const watcher = watch(service, thread.id, ended);
  await eventually(
    async () => textOf(watcher.events).length,
    (length) => length > 20,
    'some text streamed',
  );
  await service.rootControls().interrupt(thread.id);
  await watcher.done;
  expect(watcher.events.at(-1)).toMatchObject({ type: 'end', end: 'interrupted' });
  expect(text.startsWith(textOf(watcher.events))).toBe(true);
  expect(textOf(watcher.events).length).toBeLessThan(text.length);
  await eventually(async () => server.requests[0]!.aborted, Boolean, 'the provider request aborted');
  const idle = await untilTurns(service, thread.id, 1);
  expect(idle.latestTurn).toMatchObject({ status: 'interrupted' });
});

test('forged, malformed and oversized live output changes nothing; a forged watcher is refused', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  policy = () => ({ text: 'the real answer' });
  const thread = await spawnModelThread(service, 'answer once');
  await untilTurns(service, thread.id, 1);
  const conversation = temporal.client.workflow.getHandle(relatedId('conversation', thread.id));
  const own = await service.capabilityOf(thread.id);
  const forgedKey = mintCapability('0'.repeat(64), own.rootId, own.lineage, own.threadId);
  const call = { turn: 9, step: 0, attempt: 1 };
  const chunk = { call, offset: 0, text: 'forged' };
  const nearlyTwoMiB = 'x'.repeat(2 * 1024 * 1024 - 4096);
  for (const payload of [
    null,
    'text',
    nearlyTwoMiB,
    { ...chunk, from: own, text: nearlyTwoMiB },
    { ...chunk },
    { ...chunk, from: forgedKey },
    // The root is the thread's ancestor, not the thread: it may read, not write.
    { ...chunk, from: service.rootCapability },
    { ...chunk, from: own, text: 'x'.repeat(9 * 1024) },
    { ...chunk, from: own, offset: -1 },
    { ...chunk, from: own, call: { turn: 'nine' } },
    { ...chunk, from: own, extra: true },
  ])
    await conversation.signal(liveOutputSignal, payload as never);
  // Nothing streamed to this conversation: a fresh watcher sees no call.
  const view = await conversation.executeUpdate(watchOutputUpdate, {
    args: [{ from: service.rootCapability, waitMs: 0 }],
  });
  expect(view.call).toBeUndefined();
  expect(view.text).toBe('');
  const refusals = await Promise.all(
    [
      null,
      {},
      { from: forgedKey },
      { from: own, waitMs: -5 },
      { from: own, cursor: { offset: 'x' } },
      // Over our update bound (160 KiB), under the server's bound of update arguments in flight (1.7 MB),
      // which refuses a nearly-2-MiB update before it reaches the workflow.
      { from: own, cursor: { offset: 0, padding: 'x'.repeat(400_000) } },
    ].map((request) =>
      kitErrorOf(
        kitCall('watch', () => conversation.executeUpdate(watchOutputUpdate, { args: [request as never] })),
      ),
    ),
  );
  expect(refusals.map((error) => error.kind)).toEqual([
    'Protocol',
    'PermissionDenied',
    'PermissionDenied',
    'Protocol',
    'Protocol',
    'Protocol',
  ]);
  // The thread's own workflow's capability may write: proof the refusals above were about the sender.
  // A delegated one (capabilityOf, for a service acting as the thread) may not: only its workflow streams.
  await conversation.signal(liveOutputSignal, { ...chunk, from: own, text: 'delegated' });
  const stillNothing = await conversation.executeUpdate(watchOutputUpdate, {
    args: [{ from: service.rootCapability, waitMs: 0 }],
  });
  expect(stillNothing.text).toBe('');
  const workflowOwn = mintCapability(service.capability, own.rootId, own.lineage, own.threadId);
  await conversation.signal(liveOutputSignal, { ...chunk, from: workflowOwn, text: 'real' });
  const after = await conversation.executeUpdate(watchOutputUpdate, {
    args: [{ from: service.rootCapability, waitMs: 0 }],
  });
  expect(after).toMatchObject({ call, text: 'real' });
  // No workflow task failed on any of it (SPEC S3.10), and the conversation still works.
  const failed = (await historyOf(conversation.workflowId)).filter(
    (event) => event.workflowTaskFailedEventAttributes,
  );
  expect(failed).toEqual([]);
  expect((await service.rootControls().loadThread(thread.id))?.status).toBe('idle');
});

test('a watch of an ended thread ends at once, with no polling left running', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const text = words(10, 'e');
  policy = () => ({ text, chunkDelayMs: 5 });
  const thread = await spawnModelThread(service, 'say ten words, then end');
  await untilTurns(service, thread.id, 1);
  await service.rootControls().close(thread.id);
  // The root lists it cancelled as soon as it decides the close; its end reaches its conversation a
  // moment later (which closes then).
  await eventually(
    () => conversationSummary(temporal.client, relatedId('conversation', thread.id)),
    (summary) => summary.closed,
    'the thread’s end to reach its conversation',
  );
  // Nothing stops this watch but the thread's end (its long-polls wait 5 s each).
  const { events, done } = watch(service, thread.id, () => false);
  await done;
  // Nobody watched its call, so none of its text was sent (its answer is the thread's message).
  expect(events).toEqual([]);
  // One poll, and the watch ended with it.
  const watches = (await historyOf(relatedId('conversation', thread.id))).filter(
    (event) =>
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'watch-output',
  );
  expect(watches).toHaveLength(1);
  await service.shutdown();
});

test('a signal option that is not an AbortSignal is refused, not thrown from a timer', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  for (const signal of [42, {}, 'x', null]) {
    const refused = await kitErrorOf(
      (async () => {
        for await (const _ of service.watchOutput(service.rootThreadId, {
          signal: signal as unknown as AbortSignal,
        }))
          break;
      })(),
    );
    expect(`${refused.kind}: ${refused.message}`).toBe(
      'Protocol: watchOutput: `signal` must be an AbortSignal',
    );
  }
  await service.shutdown();
});

test('a watch already waiting when its thread ends answers then, and the watcher stops', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  policy = () => ({ text: words(5, 'q'), chunkDelayMs: 5 });
  const thread = await spawnModelThread(service, 'say five words, then wait');
  await untilTurns(service, thread.id, 1);
  const conversation = relatedId('conversation', thread.id);
  const watches = async () =>
    (await historyOf(conversation)).filter(
      (event) =>
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'watch-output',
    );
  // One long-poll of up to 30 s: only the thread's end can answer it early.
  const events: LiveOutputEvent[] = [];
  const done = (async () => {
    for await (const event of service.watchOutput(thread.id, { pollWaitMs: 30_000 })) events.push(event);
  })();
  await eventually(watches, (accepted) => accepted.length === 1, 'the watch to be waiting');
  await service.rootControls().close(thread.id);
  await done;
  expect(events).toEqual([]);
  // The waiting poll answered with the end: no second poll (before, it waited out its 30 s, then polled
  // again to learn that the thread had ended).
  expect(await watches()).toHaveLength(1);
  expect(patchesOf(await historyOf(conversation))).toContain('watchWakesAtThreadEnd');
  await service.shutdown();
});
