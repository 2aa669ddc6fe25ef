// SPEC S3.2: the rules of a new root run hold for whoever starts it. A raw Temporal client that skips
// the client library and starts rootRunWorkflow itself meets them in the workflow: a grant for another
// root or a run under another workflow id is PermissionDenied, a spent budget QuotaExceeded.
import { randomBytes, randomUUID } from 'node:crypto';
import { toKitError } from '../../client/errors';
import { ThreadService } from '../../client/thread-service';
import { newId, relatedId } from '../../domain/ids';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary } from '../../client/conversations';
import { DelegationGrant, type RootRunInputShape } from '../../domain/schemas';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('attach-rules');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/** Starts rootRunWorkflow straight from a raw client and returns the KitError it fails with. */
async function failureOf(input: RootRunInputShape, workflowId = input.rootThreadId): Promise<string> {
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId,
    args: [input],
  });
  const failure = await handle.result().then(
    () => undefined,
    (error: unknown) => error,
  );
  const error = toKitError(failure);
  return `${error.kind}: ${error.message}`;
}

test('a raw start with a foreign grant, another workflow id or a spent budget fails with the kind attach gives', async () => {
  const input = (grant: Partial<DelegationGrant> = {}): RootRunInputShape => {
    const rootThreadId = newId('thread', randomUUID);
    return {
      protocolVersion: 1,
      rootThreadId,
      runKey: randomBytes(32).toString('hex'),
      taskQueue,
      spec: { task: 'skip the checks', name: 'root' },
      grant: DelegationGrant.parse({ owner: 'raw', rootThreadId, ...grant }),
    };
  };
  const other = newId('thread', randomUUID);
  const foreign = input({ rootThreadId: other });
  expect(await failureOf(foreign)).toBe(
    `PermissionDenied: the grant is for root ${other}, not ${foreign.rootThreadId}`,
  );
  const elsewhere = input();
  expect(await failureOf(elsewhere, `not-${elsewhere.rootThreadId}`)).toMatch(
    /^PermissionDenied: the root run of thread_[0-9a-f]{32} must run as workflow/,
  );
  expect(await failureOf(input({ budgetTokens: 100, spentTokens: 100 }))).toBe(
    "QuotaExceeded: the grant's budget is exhausted: 100 of 100 tokens spent",
  );
});

test('an agent or a conversation started by a raw client under another workflow id than its own fails PermissionDenied', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const child = await service.rootControls().spawn({ task: 'be copied', name: 'copied' });
  await untilTurns(service, child.id, 1);
  for (const [type, id] of [
    ['agentWorkflow', child.id],
    ['conversationWorkflow', child.conversationId],
  ] as const) {
    // The very input its workflow was started with, valid in every field.
    const history = await temporal.client.workflow.getHandle(id).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input: unknown = JSON.parse(Buffer.from(payload!.data!).toString('utf8'));
    const copy = `copy-${id}`;
    const handle = await temporal.client.workflow.start(type, { taskQueue, workflowId: copy, args: [input] });
    const error = toKitError(
      await handle.result().then(
        () => undefined,
        (failure: unknown) => failure,
      ),
    );
    expect(`${error.kind}: ${error.message}`).toBe(
      `PermissionDenied: ${type === 'agentWorkflow' ? 'the agent of thread' : 'conversation'} ${id} must run as workflow ${id}, not ${copy}`,
    );
  }
  await service.shutdown();
});

test('attach refuses options its root run would refuse before starting it, so the id stays free', async () => {
  const rootThreadId = newId('thread', randomUUID);
  for (const bad of [{ continueAsNewAfterEvents: 5 }, { shutdownGraceMs: -1 }, { shutdownGraceMs: 1e12 }]) {
    const refused = await kitErrorOf(attachRun(temporal.client, taskQueue, { rootThreadId, ...bad }));
    expect(refused.kind).toBe('Protocol');
    expect(refused.message).toContain(Object.keys(bad)[0]);
  }
  const service = await attachRun(temporal.client, taskQueue, { rootThreadId });
  expect((await service.counters()).live).toBe(0);
  await service.shutdown();
});

test("attach refuses a root id whose conversation's id a raw client took for another owner; one a receiver opened first is claimed", async () => {
  // A raw client starts the conversation of a root id a backend will choose, naming an owner of its own:
  // that conversation would refuse everything the root publishes, so its approvals would reach nobody.
  const taken = newId('thread', randomUUID);
  const squatter = await temporal.client.workflow.start('conversationWorkflow', {
    taskQueue,
    workflowId: relatedId('conversation', taken),
    args: [
      {
        protocolVersion: 1,
        conversationId: relatedId('conversation', taken),
        owner: {
          rootId: taken,
          threadId: taken,
          runKey: randomBytes(32).toString('hex'),
          retentionMs: 60_000,
        },
      },
    ],
  });
  const refused = await kitErrorOf(attachRun(temporal.client, taskQueue, { rootThreadId: taken }));
  expect(`${refused.kind}: ${refused.message}`).toBe(
    `Conflict: root ${taken} cannot be attached: its conversation's id ${relatedId('conversation', taken)} is taken by a conversation of ${taken}, started before this root; attach with another rootThreadId`,
  );
  await expect(temporal.client.workflow.getHandle(taken).describe()).rejects.toThrow(/not found/i);
  await squatter.terminate('test over');

  // A receiver that opened the root's conversation before the root started: the root claims it.
  const early = newId('thread', randomUUID);
  const receiver = await ConversationNotificationReceiver.open(
    temporal.client,
    relatedId('conversation', early),
    {
      taskQueue,
      pollWaitMs: 1_000,
    },
  );
  const service = await attachRun(temporal.client, taskQueue, { rootThreadId: early });
  const summary = await eventually(
    () => conversationSummary(temporal.client, relatedId('conversation', early)),
    ({ owner }) => owner === early,
    'the root to claim its conversation',
  );
  expect(summary.owner).toBe(early);
  await receiver.dispose();
  await service.shutdown();
});

test("attach and reopen on a sub-agent's id say it is not a root run, as final kinds", async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const child = await service.rootControls().spawn({ task: 'be a sub-agent', name: 'not-a-root' });
  const attached = await kitErrorOf(attachRun(temporal.client, taskQueue, { rootThreadId: child.id }));
  expect([attached.kind, attached.message]).toEqual([
    'Conflict',
    `${child.id} is the id of a agentWorkflow, not of a root run: attach with another rootThreadId`,
  ]);
  const reopened = await kitErrorOf(ThreadService.reopen(temporal.client, child.id, service.capability));
  expect(reopened.kind).toBe('NotFound');
  // A root run that failed at its start answers no query: InvalidState, not a retryable Integration.
  const failed = newId('thread', randomUUID);
  await temporal.client.workflow.start('rootRunWorkflow', { taskQueue, workflowId: failed, args: [{}] });
  await temporal.client.workflow
    .getHandle(failed)
    .result()
    .catch(() => undefined);
  const counted = await kitErrorOf(ThreadService.reopen(temporal.client, failed, service.capability));
  expect(counted.kind).toBe('InvalidState');
  await service.shutdown();
});

test('the result of a root run terminated from outside is Closed, not a retryable error', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  await temporal.client.workflow.getHandle(service.rootThreadId).terminate('from outside');
  const ended = await kitErrorOf(service.result());
  expect([ended.kind, ended.message]).toEqual([
    'Closed',
    'result: the workflow was terminated (from outside)',
  ]);
});

test('reads of a run whose task queue no worker polls say so, as a Timeout', async () => {
  // A typo in the task queue: the attach itself succeeds (Temporal keeps the start for a worker to come).
  const service = await attachRun(temporal.client, uniqueTaskQueue('nobody-polls'));
  try {
    const refused = await kitErrorOf(service.refreshRoot());
    expect(refused.kind).toBe('Timeout');
    expect(refused.message).toMatch(/no worker answered in time: is a worker running on the run's task queue/);
  } finally {
    await temporal.client.workflow.getHandle(service.rootThreadId).terminate('test over');
  }
}, 120_000);
