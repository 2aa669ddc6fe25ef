// SPEC S3.10: a retried update takes effect once, also when the first attempt landed on an earlier run
// of a root that has since continued as new (Temporal deduplicates update ids only within one run).
// Spawns: every client spawn carries a request id (one is made when the caller gives none), which the
// root's registry remembers across runs. Messages and interrupts: the thread that owns them (SPEC S3.1)
// carries its last update ids and their answers.
import { temporal as proto } from '@temporalio/proto';
import {
  interruptUpdate,
  mailboxQuery,
  sendMessageUpdate,
  setApprovalPolicyUpdate,
  shutdownUpdate,
  spawnUpdate,
  takeRootMessagesUpdate,
} from '../../domain/messages';
import { toKitError } from '../../client/errors';
import { ThreadService } from '../../client/thread-service';
import { attachRun, eventually, pokeRoot, untilContinuedAsNew, untilTurns } from '../helpers/runs';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('update-retry');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

test('a spawn update re-sent with the same update id after the root continued as new spawns once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const first = await root.spawn({ task: 'spawn me once', name: 'once' });

  // The update exactly as the client sent it (update id and arguments), from the first run's history.
  const history = await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory();
  const accepted = (history.events ?? []).find(
    (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'spawn',
  )!.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!;
  const updateId = accepted.meta!.updateId!;
  const [scope, request] = (accepted.input!.args!.payloads ?? []).map(
    (payload: proto.api.common.v1.IPayload) => JSON.parse(Buffer.from(payload.data!).toString('utf8')),
  );
  expect(request.requestId).toMatch(/^request_[0-9a-f]{32}$/);

  // Push the root through continue-as-new with cheap updates.
  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, first.id));

  // The retry: same update id, same arguments, on the new run.
  const again = await temporal.client.workflow
    .getHandle(service.rootThreadId)
    .executeUpdate(spawnUpdate, { args: [scope, request], updateId });
  expect(again.id).toBe(first.id);
  expect((await service.counters()).total).toBe(1);
  expect((await root.listThreads()).filter((thread) => thread.name === 'once')).toHaveLength(1);
  await service.shutdown();
}, 180_000);

test('a raw spawn update with no request id, re-sent with the same update id after the root continued as new, spawns once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  // As a raw client sends it: no request id, so only the update id names it (patch spawnKeyedByUpdate).
  const handle = temporal.client.workflow.getHandle(service.rootThreadId);
  const request = { task: 'spawn me once, raw', name: 'raw-once', fork: { type: 'none' as const } };
  const updateId = `raw-spawn-${service.rootThreadId}`;
  const first = await handle.executeUpdate(spawnUpdate, { args: [root.capability, request], updateId });
  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, first.id));

  const again = await handle.executeUpdate(spawnUpdate, { args: [root.capability, request], updateId });
  expect(again.id).toBe(first.id);
  expect((await service.counters()).total).toBe(1);
  expect((await root.listThreads()).filter((thread) => thread.name === 'raw-once')).toHaveLength(1);
  expect(failedTasks(await historyEvents(temporal.client, service.rootThreadId))).toEqual([]);
  await service.shutdown();
}, 180_000);

test('a takeRootMessages update re-sent with the same update id after the root continued as new gets the same messages', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'report to the root', name: 'drain-reporter' });
  await untilTurns(service, child.id, 1);
  const handle = temporal.client.workflow.getHandle(service.rootThreadId);
  const from = await service.capabilityOf(child.id);
  const report = async (operationId: string, content: string) => {
    await handle.signal<[unknown]>('control-request', {
      from,
      operationId: `${child.id}/${operationId}`,
      operation: { type: 'send-message', request: { recipient: service.rootThreadId, content } },
    });
    await eventually(
      async () => (await handle.query(mailboxQuery)).received.map((entry) => entry.content),
      (contents) => contents.includes(content),
      `${operationId} in the root mailbox`,
    );
  };
  const drain = (updateId: string) =>
    handle.executeUpdate(takeRootMessagesUpdate, { args: [root.capability], updateId });
  await report('small-1', 'first');
  await report('small-2', 'second');
  const small = await drain(`drain-small-${service.rootThreadId}`);
  expect(small.map((message) => message.content)).toEqual(['first', 'second']);
  // Too large for the root's answer log: a retry on a later run is told what it took, not given [].
  await report('large', 'x'.repeat(4_000));
  const large = await drain(`drain-large-${service.rootThreadId}`);
  expect(large.map((message) => message.content.length)).toEqual([4_000]);

  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, child.id));
  expect(await drain(`drain-small-${service.rootThreadId}`)).toEqual(small);
  const retried = await drain(`drain-large-${service.rootThreadId}`).then(
    () => undefined,
    (error: unknown) => toKitError(error),
  );
  expect(retried?.kind).toBe('Conflict');
  expect(retried?.details).toEqual({ count: 1, firstSeq: large[0]!.seq, lastSeq: large[0]!.seq });
  // Each message was given out once.
  expect(await root.takeRootMessages()).toEqual([]);
  await service.shutdown();
}, 180_000);

test('a sendMessage update re-sent with the same update id after the recipient continued as new is sent once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'receive once', name: 'receiver' });
  await untilTurns(service, child.id, 1);
  // The recipient's own workflow numbers its mailbox (SPEC S3.1): the update goes there.
  const handle = temporal.client.workflow.getHandle(child.id);
  const args = [
    root.capability,
    { recipient: child.id, content: 'exactly once', triggerTurn: false },
  ] as const;
  const updateId = `retry-${child.id}`;
  const first = await handle.executeUpdate(sendMessageUpdate, { args: [...args], updateId });

  // Interrupts of an idle thread change nothing: cheap updates that push it through continue-as-new.
  await untilContinuedAsNew(temporal.client, child.id, () => root.interrupt(child.id));

  const again = await handle.executeUpdate(sendMessageUpdate, { args: [...args], updateId });
  expect(again).toEqual(first);
  // Once more on this run: Temporal itself answers with the outcome it has (even for other content).
  const other = await handle.executeUpdate(sendMessageUpdate, {
    args: [args[0], { ...args[1], content: 'other' }],
    updateId,
  });
  expect(other).toEqual(first);
  const next = await root.sendMessage({ recipient: child.id, content: 'next', triggerTurn: true });
  expect(next.seq).toBe(2);
  await eventually(
    () => temporal.client.workflow.getHandle(child.id).query(mailboxQuery),
    (mailbox) => mailbox.received.length === 2,
    'both messages in the mailbox',
  );
  const mailbox = await temporal.client.workflow.getHandle(child.id).query(mailboxQuery);
  expect(mailbox.received.map((entry) => [entry.seq, entry.content])).toEqual([
    [1, 'exactly once'],
    [2, 'next'],
  ]);
  await service.shutdown();
}, 180_000);

test('an interrupt update re-sent with the same update id after the thread continued as new gets its receipt', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'idle', name: 'idler' });
  await untilTurns(service, child.id, 1);
  const handle = temporal.client.workflow.getHandle(child.id);
  const updateId = `interrupt-${child.id}`;
  const first = await handle.executeUpdate(interruptUpdate, { args: [root.capability, child.id], updateId });
  expect(first).toEqual({ thread: child.id, cancellationRequested: false });
  await untilContinuedAsNew(temporal.client, child.id, () => root.interrupt(child.id));
  const again = await handle.executeUpdate(interruptUpdate, { args: [root.capability, child.id], updateId });
  expect(again).toEqual(first);
  await service.shutdown();
}, 180_000);

test('a thread’s message to the root, its request re-sent with the same operation id after the root continued as new, is admitted once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'report once', name: 'reporter' });
  await untilTurns(service, child.id, 1);
  // The child's request as its transport sends it: the root thread's own operations take it, as any
  // thread's take theirs (SPEC S3.1), and remember its operation id across continue-as-new.
  const rootHandle = temporal.client.workflow.getHandle(service.rootThreadId);
  const request = async (operationId: string, content: string) =>
    rootHandle.signal<[unknown]>('control-request', {
      from: await service.capabilityOf(child.id),
      operationId,
      operation: { type: 'send-message', request: { recipient: service.rootThreadId, content } },
    });
  const received = async () =>
    (await rootHandle.query(mailboxQuery)).received.map((entry) => [entry.seq, entry.content]);
  await request(`${child.id}/retried`, 'exactly once');
  await eventually(received, (messages) => messages.length === 1, 'the message in the root mailbox');

  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, child.id));
  await request(`${child.id}/retried`, 'exactly once');
  await request(`${child.id}/next`, 'next');
  await eventually(received, (messages) => messages.length >= 2, 'the next message');
  expect(await received()).toEqual([
    [1, 'exactly once'],
    [2, 'next'],
  ]);
  await service.shutdown();
}, 180_000);

test('a thread’s message to the root, queued while the root continued as new and carried into its next run, is admitted there and starts the root’s turn', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'report later', name: 'late-reporter' });
  await untilTurns(service, child.id, 1);
  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, child.id));
  // The run's own input, with one request queued as a releasing run carries it (SPEC S3.10): the
  // next run answers it while it is still being made, before the root thread's operations exist.
  const handle = temporal.client.workflow.getHandle(service.rootThreadId);
  const { events } = await handle.fetchHistory();
  const [payload] = events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads!;
  const input = JSON.parse(Buffer.from(payload!.data!).toString('utf8'));
  const turnsBefore = (await service.refreshRoot()).turnsStarted;
  input.resume.queued = [
    {
      from: await service.capabilityOf(child.id),
      operationId: `${child.id}/carried`,
      operation: {
        type: 'send-message',
        request: { recipient: service.rootThreadId, content: 'carried', triggerTurn: true },
      },
    },
  ];
  await handle.terminate('restarted with a carried request');
  await temporal.client.workflow.start('rootRunWorkflow', {
    workflowId: service.rootThreadId,
    taskQueue,
    args: [input],
  });
  const carried = await eventually(
    async () => (await handle.query(mailboxQuery)).received.find((entry) => entry.content === 'carried'),
    (entry) => entry?.consumedInTurn !== undefined,
    'the carried message taken by a root turn',
  );
  expect(carried).toMatchObject({ sender: child.id, recipient: service.rootThreadId });
  expect((await service.refreshRoot()).turnsStarted).toBeGreaterThan(turnsBefore);
  expect(failedTasks(await historyEvents(temporal.client, service.rootThreadId))).toEqual([]);
  // The service's handle names the terminated run; the restarted one is reopened.
  await (await ThreadService.reopen(temporal.client, service.rootThreadId, service.capability)).shutdown();
}, 180_000);

test('an update id longer than the answer log keeps is remembered too: a message re-sent with it after continue-as-new is sent once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'receive once', name: 'long-ids' });
  await untilTurns(service, child.id, 1);
  const handle = temporal.client.workflow.getHandle(child.id);
  const args = [root.capability, { recipient: child.id, content: 'long id', triggerTurn: false }] as const;
  // Temporal takes an update id of any length; the answer log keeps ids up to 200 characters.
  const updateId = `retry-${child.id}-${'x'.repeat(250)}`;
  const first = await handle.executeUpdate(sendMessageUpdate, { args: [...args], updateId });
  await untilContinuedAsNew(temporal.client, child.id, () => root.interrupt(child.id));
  const again = await handle.executeUpdate(sendMessageUpdate, { args: [...args], updateId });
  expect(again).toEqual(first);
  const mailbox = await handle.query(mailboxQuery);
  expect(mailbox.received.map((entry) => entry.content)).toEqual(['long id']);
  await service.shutdown();
}, 180_000);

test('an approval policy change re-sent with the same update id after the root continued as new is not applied again', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    continueAsNewAfterEvents: 100,
    approvalPolicy: {},
  });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'idle', name: 'policy-poke' });
  const handle = temporal.client.workflow.getHandle(service.rootThreadId);
  const updateId = `policy-${service.rootThreadId}`;
  const change = { neverAsk: ['tool_a'] };
  const first = await handle.executeUpdate(setApprovalPolicyUpdate, {
    args: [root.capability, change],
    updateId,
  });
  const newer = await service.setApprovalPolicy({ neverAsk: ['tool_b'] });
  expect(newer.version).toBe(first.version + 1);
  await untilContinuedAsNew(temporal.client, service.rootThreadId, pokeRoot(service, child.id));
  const again = await handle.executeUpdate(setApprovalPolicyUpdate, {
    args: [root.capability, change],
    updateId,
  });
  expect(again).toEqual(first);
  expect(await service.approvalPolicy()).toEqual(newer);
  // SPEC S2.4: an update takes its arguments and nothing more.
  const extra = await handle.executeUpdate(shutdownUpdate, { args: [root.capability, null] as never }).then(
    () => undefined,
    (error: unknown) => toKitError(error),
  );
  expect(extra?.kind).toBe('Protocol');
  const extraSpawn = await handle
    .executeUpdate(spawnUpdate, { args: [root.capability, { task: 'extra' }, 'more'] as never })
    .then(
      () => undefined,
      (error: unknown) => toKitError(error),
    );
  expect(extraSpawn?.kind).toBe('Protocol');
  expect((await service.counters()).live).toBe(1);
  await service.shutdown();
}, 180_000);
