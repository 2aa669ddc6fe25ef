// SPEC S11.4 with S2.4, S3.9, S3.10: from a raw Temporal client, forged, malformed and huge policy
// changes, pushes and remembered answers are refused or dropped and change nothing; a run attached
// without a policy keeps the behaviour it had; the policy survives continue-as-new of the root and of
// its threads.
import type { Client } from '@temporalio/client';
import { randomBytes, randomUUID } from 'node:crypto';
import { resolveNotification } from '../../client/conversations';
import { executeUpdate } from '../../client/updates';
import { createActivities } from '../../activities';
import type { Capability } from '../../domain/capability';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { setApprovalPolicyUpdate } from '../../domain/messages';
import { RootInbox, scripted, shipStep, shipTool, untilPolicyPushes } from '../helpers/approvals';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('approval-hostile');
const ship = shipTool();
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [ship.tool] }) });
});
afterAll(async () => temporal?.close());

const signal = (client: Client, workflowId: string, name: string, payload: unknown) =>
  client.workflow.getHandle(workflowId).signal<[unknown]>(name, payload);
const forge = (capability: Capability): Capability => ({ ...capability, proof: '0'.repeat(64) });

test('forged, foreign, malformed and huge policy changes are refused with a KitError and change nothing', async () => {
  const service = await attachRun(temporal.client, taskQueue, { approvalPolicy: { neverAsk: ['echo'] } });
  const child = await service.rootControls().spawn({ task: 'idle', kernel: scripted([]) });
  await untilTurns(service, child.id, 1);
  const before = await service.approvalPolicy();
  const raw = (capability: unknown, change: unknown) =>
    kitErrorOf(
      executeUpdate(
        service.handle,
        setApprovalPolicyUpdate,
        [capability as Capability, change as never],
        'raw set-approval-policy',
      ),
    );
  const refusals: [Promise<Awaited<ReturnType<typeof raw>>>, string, RegExp][] = [
    [raw(forge(service.rootCapability), { neverAsk: ['ship'] }), ErrorKind.PermissionDenied, /proof/],
    [raw(null, { neverAsk: ['ship'] }), ErrorKind.PermissionDenied, /capability/],
    [
      raw(await service.capabilityOf(child.id), { neverAsk: ['ship'] }),
      ErrorKind.PermissionDenied,
      /only the root may change the approval policy/,
    ],
    [raw(service.rootCapability, null), ErrorKind.Protocol, /approval policy change/],
    [raw(service.rootCapability, { neverAsk: 'ship' }), ErrorKind.Protocol, /neverAsk/],
    [raw(service.rootCapability, { neverAsk: ['no spaces'] }), ErrorKind.Protocol, /neverAsk\.0/],
    [
      raw(service.rootCapability, { neverAsk: ['ship'], alwaysAsk: ['ship'] }),
      ErrorKind.Protocol,
      /alwaysAsk\.0: ship is in neverAsk too/,
    ],
    [raw(service.rootCapability, { everything: true }), ErrorKind.Protocol, /everything|nrecognized/],
    // A change that names no list would raise the version and push the same policy to every thread.
    [raw(service.rootCapability, {}), ErrorKind.Protocol, /names no list/],
    [
      raw(service.rootCapability, { neverAsk: Array.from({ length: 129 }, (_, n) => `tool${n}`) }),
      ErrorKind.Protocol,
      /at most 128/,
    ],
    [
      raw(service.rootCapability, { neverAsk: ['x'.repeat(600_000)] }),
      ErrorKind.Protocol,
      /over the \d+-byte limit of an update's arguments/,
    ],
  ];
  for (const [refusal, kind, message] of refusals) {
    const error = await refusal;
    expect(error.kind).toBe(kind);
    expect(error.message).toMatch(message);
  }
  // The client checks before it sends, with the same message.
  expect((await kitErrorOf(service.setApprovalPolicy({ alwaysAsk: ['a b'] }))).kind).toBe(ErrorKind.Protocol);
  expect((await kitErrorOf(service.setApprovalPolicy({}))).message).toMatch(/names no list/);
  expect(await service.approvalPolicy()).toEqual(before);
  // Refused in validators: no trace in history, no failed task.
  const events = await historyEvents(temporal.client, service.rootThreadId);
  const accepted = events.flatMap(
    (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? [],
  );
  expect(accepted).not.toContain('set-approval-policy');
  expect(accepted).toContain('spawn');
  expect(failedTasks(events)).toEqual([]);
});

test('forged pushes to a thread and forged remembered answers to the root change nothing', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const child = await service.rootControls().spawn({ task: 'ship', kernel: scripted([shipStep('forged')]) });
  const waiting = await inbox.interaction(child.id);
  const own = await service.capabilityOf(child.id);
  const allow = { version: 99, neverAsk: ['ship'], alwaysAsk: [], remembered: ['ship'] };
  const pushes = [
    null,
    'ship',
    { from: forge(service.rootCapability), policy: allow },
    { from: own, policy: allow }, // a thread's own proof: not the root's
    { from: service.rootCapability, policy: { ...allow, neverAsk: ['ship', 'ship'] } },
    { from: service.rootCapability, policy: { ...allow, remembered: ['x'.repeat(1_500_000)] } },
  ];
  for (const push of pushes) await signal(temporal.client, child.id, 'approval-policy-changed', push);
  // A thread's capability cannot remember for the tree, nor a forged root capability.
  const remember = (by: unknown, n: number) => ({
    from: own,
    operationId: `${own.threadId}/forged-${n}`,
    operation: { type: 'remember-approval', tool: 'ship', by },
  });
  for (const [n, by] of [own, forge(service.rootCapability), null].entries())
    await signal(temporal.client, service.rootThreadId, 'control-request', remember(by, n));
  await untilPolicyPushes(temporal.client, child.id, pushes.length);
  // A person still answers the call: it was not released (a released call would answer Conflict).
  await resolveNotification(
    temporal.client,
    waiting,
    { type: 'approval', approved: false, reason: 'no' },
    { capability: service.rootCapability },
  );
  expect(JSON.parse((await untilTurns(service, child.id, 1)).latestTurn!.result!)).toMatchObject({
    denied: true,
  });
  // An update after the signals is handled after them: the root remembered nothing.
  expect(await service.setApprovalPolicy({ neverAsk: [] })).toEqual({
    version: 1,
    neverAsk: [],
    alwaysAsk: [],
    remembered: [],
  });
  for (const workflowId of [child.id, service.rootThreadId])
    expect(failedTasks(await historyEvents(temporal.client, workflowId))).toEqual([]);
  expect(ship.runs).not.toContain('forged');
  await inbox.close();
});

test('a root run started without a policy keeps its behaviour: no gate, and a change is Unsupported', async () => {
  const rootThreadId = newId('thread', randomUUID);
  const runKey = randomBytes(32).toString('hex');
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId: rootThreadId,
    args: [
      {
        protocolVersion: 1,
        rootThreadId,
        runKey,
        spec: { task: 'an old-style run', kernel: scripted([shipStep('no-gate')]) },
        grant: { owner: 'tests', rootThreadId, idleTimeoutMs: 600_000 },
        taskQueue,
      },
    ],
  });
  const { rootCapability } = await import('../../domain/capability');
  const capability = rootCapability(runKey, rootThreadId);
  // Before the gate, a scripted tool step ran a needsApproval tool without asking: it still does.
  await eventually(
    async () => ship.runs,
    (runs) => runs.includes('no-gate'),
    'the old-style run shipping',
  );
  const refused = await kitErrorOf(
    executeUpdate(handle, setApprovalPolicyUpdate, [capability, { neverAsk: ['ship'] }], 'raw'),
  );
  expect(refused.kind).toBe(ErrorKind.Unsupported);
  await executeUpdate(
    handle,
    (await import('../../domain/messages')).shutdownUpdate,
    [capability],
    'shutdown',
  );
});

test('the policy survives continue-as-new of the root and of a thread', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({
    name: 'later',
    task: 'ship in a later turn',
    kernel: scripted([], [shipStep('after-can')]),
  });
  await untilTurns(service, child.id, 1);
  await service.setApprovalPolicy({ neverAsk: ['ship'] });
  // Policy changes until the root has continued as new (each is pushed to the child too).
  const firstRoot = (await service.handle.describe()).runId;
  for (let change = 0; (await service.handle.describe()).runId === firstRoot; change++) {
    expect(change).toBeLessThan(100);
    await service.setApprovalPolicy({ alwaysAsk: change % 2 ? ['echo'] : [] });
  }
  const pushed = await service.setApprovalPolicy({ alwaysAsk: [] });
  await untilPolicyPushes(temporal.client, child.id, pushed.version);
  // Then messages alone, no push, until the child has continued as new: it carries what it was given.
  const childHandle = temporal.client.workflow.getHandle(child.id);
  const childRun = (await childHandle.describe()).runId;
  for (let n = 0; (await childHandle.describe()).runId === childRun; n++) {
    expect(n).toBeLessThan(200);
    await root.sendMessage({ recipient: child.id, content: `filler ${n}` });
  }
  expect(await service.approvalPolicy()).toEqual(pushed);
  await root.sendMessage({ recipient: child.id, content: 'now ship', triggerTurn: true });
  expect((await untilTurns(service, child.id, 2)).latestTurn?.result).toBe('shipped after-can');
  // A thread the new root run starts gets the carried policy in its input.
  const late = await root.spawn({ task: 'ship', kernel: scripted([shipStep('after-root-can')]) });
  expect((await untilTurns(service, late.id, 1)).latestTurn?.result).toBe('shipped after-root-can');
  const summary = await import('../../client/conversations').then(({ conversationSummary }) =>
    conversationSummary(temporal.client, late.conversationId),
  );
  expect(summary.resolvedInteractions + summary.pendingInteractions).toBe(0);
}, 240_000);
