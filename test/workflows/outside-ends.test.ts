// A sub-agent whose workflow ends outside agents-kit — terminated from the Web UI or `temporal workflow
// terminate`, timed out — reports no end of its own. Its root run ends it as Temporal closed it
// (patch `childCloseEnds`: its slot comes back) and winds it down as its own ending would have
// (`outsideEndsWindDown`, SPEC S4.8, S5.10): its live sub-agents are closed, its conversation is told
// the thread ended, and a close that finds its workflow gone (ended after the run that started it
// continued as new, which Temporal no longer tells the root) confirms its end.
import { createActivities } from '../../activities';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary } from '../../client/conversations';
import type { AttachOptions, ThreadService } from '../../client/thread-service';
import { relatedId } from '../../domain/ids';
import type { AgentThread, SpawnRequestInput } from '../../domain/schemas';
import { closedAs, threadEndOf } from '../helpers/closing';
import { patchesOf } from '../helpers/histories';
import {
  attachRun,
  eventually,
  askingAgent,
  idleAgent,
  kitErrorOf,
  leadWithHelper,
  untilClosed,
  untilTurns,
} from '../helpers/runs';
import { ThreadControls } from '../../client/thread-controls';
import { ErrorKind } from '../../domain/errors';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('outside-ends');
/**
 * The root's ask whether its earlier runs' threads still run (the activity `threadWorkflowEnds`), as
 * the worker runs it: held while a test sets `held`, counted as it starts.
 */
const asks = { started: 0, held: undefined as Promise<void> | undefined };
beforeAll(async () => {
  temporal = await connectTestTemporal();
  const activities = createActivities();
  await temporal.startWorker({
    taskQueue,
    activities: {
      ...activities,
      threadWorkflowEnds: async (threadIds: readonly string[]) => {
        asks.started++;
        await asks.held;
        return activities.threadWorkflowEnds(threadIds);
      },
    },
  });
});
afterAll(async () => temporal?.close());

const terminate = (thread: AgentThread) =>
  temporal.client.workflow.getHandle(thread.id).terminate('stuck, says the operator');

/** How the thread's conversation tells its end, read with the root's capability. */
async function conversationEnd(service: ThreadService, thread: AgentThread) {
  const receiver = await ConversationNotificationReceiver.open(
    temporal.client,
    relatedId('conversation', thread.id),
    { taskQueue, capability: service.rootCapability, pollWaitMs: 1_000 },
  );
  try {
    return await threadEndOf(receiver);
  } finally {
    await receiver.dispose();
  }
}

const rootPatches = async (service: ThreadService) =>
  patchesOf((await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory()).events ?? []);

test('an agent terminated from outside is ended by the root as failed: its slot comes back, its conversation ends', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    shutdownGraceMs: 60_000,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxConcurrent: 1 },
  });
  const root = service.rootControls();
  const doomed = await root.spawn(idleAgent('doomed'));
  await untilTurns(service, doomed.id, 1);
  await terminate(doomed);
  const listed = await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'failed',
    'the root to list the terminated agent as failed',
  );
  expect(listed?.status).toBe('failed');
  expect(await service.counters()).toMatchObject({ live: 0, total: 1 });
  // Its conversation says the thread ended, as the thread would have: its stream ends there.
  expect(await conversationEnd(service, doomed)).toMatchObject({ event: 'thread-end', detail: 'failed' });
  // Its slot came back (maxConcurrent 1), and a shutdown does not wait for it.
  const next = await root.spawn(idleAgent('next'));
  await untilTurns(service, next.id, 1);
  expect(await service.shutdown()).toMatchObject({ cancelled: [next.id], unconfirmed: [] });
  expect(await rootPatches(service)).toEqual(
    expect.arrayContaining(['childCloseEnds', 'outsideEndsWindDown']),
  );
  expect(await closedAs(temporal.client, service.rootThreadId)).toBe('COMPLETED');
}, 120_000);

test('what a terminated agent left pending is settled unanswered in its conversation and in the root’s: nobody is offered it again', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', idleTimeoutMs: 600_000, interactionTimeoutMs: 600_000 },
  });
  const root = service.rootControls();
  const rootConversation = (await service.refreshRoot()).conversationId;
  const askers = [
    await root.spawn({
      name: 'approver',
      task: 'ask for approval',
      kernel: { type: 'scripted', turns: [[{ type: 'ask', kind: 'approval', prompt: 'May I?' }]] },
    }),
    await root.spawn({
      name: 'questioner',
      task: 'ask a question',
      kernel: { type: 'scripted', turns: [[{ type: 'ask', kind: 'question', prompt: 'Which one?' }]] },
    }),
  ];
  const pending = (conversationId: string, count: number) =>
    eventually(
      () => conversationSummary(temporal.client, conversationId),
      (summary) => summary.pendingInteractions === count,
      `${count} pending in ${conversationId}`,
    );
  await pending(rootConversation, 2);
  for (const asker of askers) await terminate(asker);
  for (const asker of askers) {
    await pending(asker.conversationId, 0);
    // The record says so, before the thread's end.
    const receiver = await ConversationNotificationReceiver.open(temporal.client, asker.conversationId, {
      taskQueue,
      capability: service.rootCapability,
      pollWaitMs: 1_000,
    });
    const details: string[] = [];
    for (let item = await receiver.recv(); item; item = await receiver.recv())
      if (item.body.type === 'status') details.push(`${item.body.event}: ${item.body.detail ?? ''}`);
    await receiver.dispose();
    expect(details.slice(-2)).toEqual([
      expect.stringMatching(
        /^interaction-resolved: request_\w+ (denied: the thread ended before an answer|unanswered) \(nobody answered in time\)/,
      ),
      'thread-end: failed',
    ]);
  }
  expect(await pending(rootConversation, 0)).toMatchObject({ resolvedInteractions: 2 });
  await service.shutdown();
  // Read to its end, the root's conversation completes: nothing holds it open any more.
  const receiver = await ConversationNotificationReceiver.open(temporal.client, rootConversation, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });
  while (await receiver.recv());
  await receiver.dispose();
  expect(await closedAs(temporal.client, rootConversation)).toBe('COMPLETED');
}, 120_000);

test('an agent whose conversation was terminated or cancelled from outside denies what it asks at once: nobody could see or answer it', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', idleTimeoutMs: 600_000, interactionTimeoutMs: 600_000 },
  });
  const root = service.rootControls();
  const askLater = (name: string): SpawnRequestInput => ({
    name,
    task: 'answer once, then ask',
    kernel: {
      type: 'scripted',
      turns: [
        [{ type: 'reply', text: 'ready' }],
        [
          { type: 'ask', kind: 'approval', prompt: 'May I?' },
          { type: 'reply', text: '{{last}}' },
        ],
      ],
    },
  });
  const terminated = await root.spawn(askLater('conversation-terminated'));
  const cancelled = await root.spawn(askLater('conversation-cancelled'));
  for (const asker of [terminated, cancelled]) await untilTurns(service, asker.id, 1);
  await temporal.client.workflow.getHandle(terminated.conversationId).terminate('from outside');
  await temporal.client.workflow.getHandle(cancelled.conversationId).cancel();
  await untilClosed(temporal.client, cancelled.conversationId);
  for (const asker of [terminated, cancelled]) {
    await root.sendMessage({ recipient: asker.id, content: 'go on', triggerTurn: true });
    expect((await untilTurns(service, asker.id, 2)).latestTurn?.result).toBe(
      'denied: the thread’s conversation has ended, so nobody can answer',
    );
  }
  await service.shutdown();
}, 120_000);

test('a terminated agent takes its live sub-agents with it, as a close does', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const { lead, helper } = await leadWithHelper(service);
  await terminate(lead);
  // The helper's workflow is closed by the root, as under a close of the lead.
  expect(await closedAs(temporal.client, helper.id)).toBe('COMPLETED');
  const listed = await eventually(
    () => root.listThreads(),
    (threads) => threads.every((thread) => thread.id === service.rootThreadId || thread.status !== 'idle'),
    'the root to list both ended',
  );
  expect(listed.map((thread) => [thread.name, thread.status])).toEqual([
    ['root', expect.any(String)],
    ['lead', 'failed'],
    ['helper', 'cancelled'],
  ]);
  expect(await service.counters()).toMatchObject({ live: 0, total: 2 });
  expect(await conversationEnd(service, lead)).toMatchObject({ event: 'thread-end', detail: 'failed' });
  expect(await conversationEnd(service, helper)).toMatchObject({ event: 'thread-end', detail: 'cancelled' });
  expect(await service.shutdown()).toMatchObject({ unconfirmed: [] });
}, 120_000);

/**
 * A root run that continues as new after 100 events, with one idle agent, `doomed`; `continued()` says
 * whether the root has continued as new since, `messageOn()` has the agent message the root until it has
 * (its next run no longer hears of the agent's close).
 */
async function rootWithDoomed(
  overrides: Partial<AttachOptions>,
  spec: SpawnRequestInput = idleAgent('doomed'),
) {
  const service = await attachRun(temporal.client, taskQueue, {
    continueAsNewAfterEvents: 100,
    ...overrides,
  });
  const rootRun = async () =>
    (await temporal.client.workflow.getHandle(service.rootThreadId).describe()).runId;
  const firstRun = await rootRun();
  const root = service.rootControls();
  const doomed = await root.spawn(spec);
  await untilTurns(service, doomed.id, 1);
  const continued = async () => (await rootRun()) !== firstRun;
  const messageOn = async () => {
    const asDoomed = new ThreadControls(service.handle, await service.capabilityOf(doomed.id));
    for (let n = 0; !(await continued()); n++) {
      if (n > 500) throw new Error('the root never continued as new');
      await asDoomed.sendMessage({ recipient: service.rootThreadId, content: `m${n}` });
    }
  };
  return { service, root, doomed, continued, messageOn };
}

test('an agent terminated after its root continued as new: a shutdown finds it gone and does not wait for it', async () => {
  const { service, root, doomed, continued } = await rootWithDoomed({
    shutdownGraceMs: 60_000,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxConcurrent: 20 },
  });
  // Enough spawns for its history to pass 100 events: the root continues as new, and its next run no
  // longer hears of the doomed agent's close.
  for (let index = 0; index < 12; index++) await root.spawn(idleAgent(`filler-${index}`));
  await eventually(continued, (yes) => yes, 'the root to continue as new');
  await terminate(doomed);
  const report = await service.shutdown();
  expect(report.unconfirmed).toEqual([]);
  expect(report.cancelled).toContain(doomed.id);
  expect(await conversationEnd(service, doomed)).toMatchObject({ event: 'thread-end', detail: 'cancelled' });
  expect(await rootPatches(service)).toContain('outsideEndsWindDown');
  expect(await closedAs(temporal.client, service.rootThreadId)).toBe('COMPLETED');
}, 180_000);

test('a spawn refused for room asks whether agents of the root’s earlier runs still run: a terminated one frees its slot', async () => {
  const { service, root, doomed, messageOn } = await rootWithDoomed({
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxConcurrent: 1 },
  });
  await messageOn();
  await terminate(doomed);
  await untilClosed(temporal.client, doomed.id);

  // The only slot is the doomed agent's: the refused spawn asks, finds it terminated, and is admitted.
  const next = await root.spawn(idleAgent('next'));
  await untilTurns(service, next.id, 1);
  expect((await root.loadThread(doomed.id))?.status).toBe('failed');
  expect(await conversationEnd(service, doomed)).toMatchObject({ event: 'thread-end', detail: 'failed' });
  expect(await rootPatches(service)).toEqual(
    expect.arrayContaining(['earlierRunEndsChecked', 'earlierRunEndsAskedBeside']),
  );
  // A live agent holds the slot now: the next spawn is refused as before.
  expect((await kitErrorOf(root.spawn(idleAgent('third')))).kind).toBe(ErrorKind.QuotaExceeded);
  expect(await service.shutdown()).toMatchObject({ unconfirmed: [] });
}, 180_000);

/**
 * An agent of the root's earlier run, in the middle of its second turn (it waits for an answer): its
 * messages push the root past 100 events, so the root continues as new and no longer hears of its close.
 */
async function earlierRunAgentMidTurn() {
  const { service, root, doomed, messageOn } = await rootWithDoomed(
    { grant: { owner: 'tests', idleTimeoutMs: 600_000 } },
    askingAgent('doomed'),
  );
  await messageOn();
  await root.sendMessage({ recipient: doomed.id, content: 'go on', triggerTurn: true });
  await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'running',
    'the root to list the agent running',
  );
  return { service, root, doomed };
}

test('a wait on an agent terminated mid-turn after its root continued as new answers at once: failed', async () => {
  const { service, root, doomed } = await earlierRunAgentMidTurn();
  await terminate(doomed);
  await untilClosed(temporal.client, doomed.id);

  // Before, this wait ran to its timeout and answered `running`.
  const waited = await root.wait({ threadIds: [doomed.id], timeoutMs: 40_000 });
  expect(waited).toMatchObject({ timedOut: false, outcomes: [{ threadId: doomed.id, status: 'failed' }] });
  expect(await conversationEnd(service, doomed)).toMatchObject({ event: 'thread-end', detail: 'failed' });
  expect(await rootPatches(service)).toEqual(
    expect.arrayContaining(['earlierRunEndsOnWait', 'earlierRunEndsAskedBeside']),
  );
  expect(await service.counters()).toMatchObject({ live: 0 });
  expect(await service.shutdown()).toMatchObject({ unconfirmed: [] });
}, 180_000);

test('a wait keeps its timeout while the ask about earlier runs is slow, and sees what the ask finds', async () => {
  const { service, root, doomed } = await earlierRunAgentMidTurn();
  let release = () => {};
  asks.held = new Promise<void>((resolve) => (release = resolve));
  try {
    const startedBefore = asks.started;
    const askedAt = Date.now();
    const waited = await root.wait({ threadIds: [doomed.id], timeoutMs: 3_000 });
    // It answered at its timeout with the ask still held (before, it waited for the ask: 3 attempts of
    // 30 s, then its timeout's rest).
    expect(Date.now() - askedAt).toBeLessThan(25_000);
    expect(waited).toMatchObject({ timedOut: true, outcomes: [{ threadId: doomed.id, status: 'running' }] });
    await eventually(
      async () => asks.started,
      (started) => started > startedBefore,
      'the root to ask',
    );

    // The agent is terminated while the ask is held; let go, the ask finds it gone and the root ends it.
    await terminate(doomed);
    await untilClosed(temporal.client, doomed.id);
  } finally {
    asks.held = undefined;
    release();
  }
  await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'failed',
    'the held ask to end the terminated agent',
  );
  const again = await root.wait({ threadIds: [doomed.id], timeoutMs: 40_000 });
  expect(again).toMatchObject({ timedOut: false, outcomes: [{ threadId: doomed.id, status: 'failed' }] });
  expect(await rootPatches(service)).toContain('earlierRunEndsAskedBeside');
  expect(await service.shutdown()).toMatchObject({ unconfirmed: [] });
}, 180_000);

test('an agent of an earlier run terminated from outside is listed failed within the check period, with no operation', async () => {
  const { service, root, doomed, messageOn } = await rootWithDoomed({
    outsideEndsCheckMs: 2_000,
    grant: { owner: 'tests', idleTimeoutMs: 600_000 },
  });
  await messageOn();
  await terminate(doomed);
  // Only reads from here on: the root's own check finds the agent gone and winds it down.
  const listed = await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'failed',
    "the root's check to find the terminated agent",
  );
  expect(listed?.status).toBe('failed');
  expect(await service.counters()).toMatchObject({ live: 0 });
  expect(await conversationEnd(service, doomed)).toMatchObject({ event: 'thread-end', detail: 'failed' });
  // Each check is an activity; none is left once no agent of an earlier run is live.
  const asks = async () =>
    ((await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory()).events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'threadWorkflowEnds',
    ).length;
  const asked = await asks();
  expect(asked).toBeGreaterThan(0);
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  expect(await asks()).toBe(asked);
  expect(await service.shutdown()).toMatchObject({ unconfirmed: [] });
}, 180_000);

test('a check period under a second is refused at attach', async () => {
  const refused = await kitErrorOf(attachRun(temporal.client, taskQueue, { outsideEndsCheckMs: 10 }));
  expect(refused.kind).toBe(ErrorKind.Protocol);
  expect(refused.message).toMatch(/outsideEndsCheckMs/);
});
