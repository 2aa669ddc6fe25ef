// SPEC S11.4: the tree's approval policy against a real server. Never-ask and always-ask lists, the
// scripted kernel's tool steps through the same gate as the model's, an "always allow" answer releasing
// calls waiting elsewhere in the tree, a policy change releasing a pending approval, and a grandchild
// spawned after a change inheriting it.
import { conversationSummary, resolveNotification } from '../../client/conversations';
import { createActivities } from '../../activities';
import { ErrorKind } from '../../domain/errors';
import type { AgentThread } from '../../domain/schemas';
import { RootInbox, scripted, shipStep, shipTool, untilPolicyPushes } from '../helpers/approvals';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('approval-policy');
const ship = shipTool();
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [ship.tool] }) });
});
afterAll(async () => temporal?.close());

const approve = { type: 'approval' as const, approved: true };
const resultOf = async (service: Awaited<ReturnType<typeof attachRun>>, thread: AgentThread, turns = 1) =>
  (await untilTurns(service, thread.id, turns)).latestTurn?.result;

test('a never-ask tool runs without an approval request, though it declares needsApproval', async () => {
  const service = await attachRun(temporal.client, taskQueue, { approvalPolicy: { neverAsk: ['ship'] } });
  const child = await service.rootControls().spawn({
    task: 'ship without asking',
    kernel: scripted([shipStep('never-ask')]),
  });
  expect(await resultOf(service, child)).toBe('shipped never-ask');
  expect(ship.runs).toContain('never-ask');
  for (const conversationId of [child.conversationId, (await service.refreshRoot()).conversationId]) {
    const summary = await conversationSummary(temporal.client, conversationId);
    expect(summary).toMatchObject({ pendingInteractions: 0, resolvedInteractions: 0 });
  }
  expect(await service.approvalPolicy()).toEqual({
    version: 0,
    neverAsk: ['ship'],
    alwaysAsk: [],
    remembered: [],
  });
});

test('an always-ask tool that does not declare needsApproval asks first, and runs once approved', async () => {
  const service = await attachRun(temporal.client, taskQueue, { approvalPolicy: { alwaysAsk: ['echo'] } });
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const child = await service.rootControls().spawn({
    task: 'echo after asking',
    kernel: scripted([{ type: 'tool', tool: 'echo', input: 'hello' }]),
  });
  const interaction = await inbox.interaction(child.id);
  expect(interaction.body).toMatchObject({
    kind: 'approval',
    prompt: expect.stringContaining('(the approval policy always asks for echo)'),
    tool: { name: 'echo', input: 'hello' },
  });
  // Nothing ran while it waited.
  expect((await service.rootControls().loadThread(child.id))?.status).toBe('running');
  await resolveNotification(temporal.client, interaction, approve, { capability: service.rootCapability });
  expect(await resultOf(service, child)).toBe('hello');
  await inbox.close();
});

test("a scripted kernel's tool step of a needsApproval tool now asks; denied, the tool never runs", async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const child = await service.rootControls().spawn({
    task: 'ship, if a person lets me',
    kernel: scripted([shipStep('scripted-denied')]),
  });
  const interaction = await inbox.interaction(child.id);
  expect(interaction.body).toMatchObject({
    kind: 'approval',
    prompt: `${child.path} wants to run ship`,
    tool: { name: 'ship', input: { target: 'scripted-denied' } },
  });
  await resolveNotification(
    temporal.client,
    interaction,
    { type: 'approval', approved: false, reason: 'not today' },
    { capability: service.rootCapability },
  );
  expect(JSON.parse((await resultOf(service, child))!)).toEqual({
    denied: true,
    reason: 'a person denied this call: not today',
  });
  expect(ship.runs).not.toContain('scripted-denied');
  await inbox.close();
});

test('"always allow" in one child releases the call waiting in another child, and no later call asks', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const root = service.rootControls();
  const first = await root.spawn({
    name: 'first',
    task: 'ship twice',
    kernel: scripted([shipStep('first-1'), shipStep('first-2')]),
  });
  const second = await root.spawn({
    name: 'second',
    task: 'ship once now, once later',
    kernel: scripted([shipStep('second-1')], [shipStep('second-2')]),
  });
  const asked = await inbox.interaction(first.id);
  const waiting = await inbox.interaction(second.id);
  // Only the root's authority remembers for the tree: the child's own capability may answer, not remember.
  const own = await service.capabilityOf(first.id);
  const refused = await kitErrorOf(
    resolveNotification(temporal.client, asked, { ...approve, remember: true }, { capability: own }),
  );
  expect(refused.kind).toBe(ErrorKind.PermissionDenied);
  expect(refused.message).toMatch(/only the root's capability remembers/);
  const resolution = await resolveNotification(
    temporal.client,
    asked,
    { ...approve, remember: true },
    { capability: service.rootCapability, name: 'ops' },
  );
  expect(resolution.answer).toEqual({ ...approve, remember: true });
  expect(await resultOf(service, first)).toBe('shipped first-2');
  expect(await resultOf(service, second)).toBe('shipped second-1');
  expect((await service.approvalPolicy()).remembered).toEqual(['ship']);
  // The released call is settled in the record as answered by the policy, nobody's answer invented.
  const released = await inbox.settlement(waiting.body.requestId);
  expect(released.body).toMatchObject({
    threadId: second.id,
    detail: expect.stringContaining(
      'approved: a person allowed ship for the rest of the run by the approval policy (remembered)',
    ),
  });
  expect((await inbox.settlement(asked.body.requestId)).body).toMatchObject({
    detail: expect.stringContaining('(ops), remembered for the run'),
  });
  expect(await conversationSummary(temporal.client, second.conversationId)).toMatchObject({
    pendingInteractions: 0,
    resolvedInteractions: 1,
  });
  // Later calls, in a later turn and in a thread spawned afterwards, run without asking.
  await root.sendMessage({ recipient: second.id, content: 'again', triggerTurn: true });
  expect(await resultOf(service, second, 2)).toBe('shipped second-2');
  const third = await root.spawn({ name: 'third', task: 'ship', kernel: scripted([shipStep('third')]) });
  expect(await resultOf(service, third)).toBe('shipped third');
  // One ask from each child (in either order: they ask at once), and none later.
  expect(inbox.interactions.map((item) => item.body.threadId).sort()).toEqual([first.id, second.id].sort());
  expect(ship.runs.filter((target) => /^(first|second|third)/.test(target)).sort()).toEqual([
    'first-1',
    'first-2',
    'second-1',
    'second-2',
    'third',
  ]);
  await inbox.close();
}, 180_000);

test('an answer for a question or a denial cannot be remembered', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const child = await service.rootControls().spawn({
    task: 'ask, then ship',
    kernel: scripted([{ type: 'ask', kind: 'approval', prompt: 'may I?' }, shipStep('not-remembered')]),
  });
  const question = await inbox.interaction(child.id);
  const notAToolCall = await kitErrorOf(
    resolveNotification(
      temporal.client,
      question,
      { ...approve, remember: true },
      {
        capability: service.rootCapability,
      },
    ),
  );
  expect(notAToolCall.kind).toBe(ErrorKind.Protocol);
  expect(notAToolCall.message).toMatch(/not about a tool call/);
  await resolveNotification(temporal.client, question, approve, { capability: service.rootCapability });
  const call = await inbox.interaction(child.id, 2);
  const denial = await kitErrorOf(
    resolveNotification(
      temporal.client,
      call,
      { type: 'approval', approved: false, remember: true },
      {
        capability: service.rootCapability,
      },
    ),
  );
  expect(denial.kind).toBe(ErrorKind.Protocol);
  await resolveNotification(temporal.client, call, approve, { capability: service.rootCapability });
  expect(await resultOf(service, child)).toBe('shipped not-remembered');
  expect((await service.approvalPolicy()).remembered).toEqual([]);
  await inbox.close();
});

test('a policy change while an approval waits releases it, answered by the policy; a late answer conflicts', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const child = await service.rootControls().spawn({
    task: 'ship when allowed',
    kernel: scripted([shipStep('released')]),
  });
  const waiting = await inbox.interaction(child.id);
  const policy = await service.setApprovalPolicy({ neverAsk: ['ship'] });
  expect(policy).toEqual({ version: 1, neverAsk: ['ship'], alwaysAsk: [], remembered: [] });
  expect(await resultOf(service, child)).toBe('shipped released');
  expect((await inbox.settlement(waiting.body.requestId)).body).toMatchObject({
    detail: expect.stringContaining('by the approval policy (never-ask)'),
  });
  const late = await kitErrorOf(
    resolveNotification(
      temporal.client,
      waiting,
      { type: 'approval', approved: false },
      {
        capability: service.rootCapability,
      },
    ),
  );
  expect(late.kind).toBe(ErrorKind.Conflict);
  expect(late.details).toMatchObject({ resolution: { byPolicy: 'never-ask' } });
  const rootConversation = (await service.refreshRoot()).conversationId;
  await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    "the root's mirror settled",
  );
  await inbox.close();
});

test('a grandchild spawned after a change inherits it: its never-ask call runs, its always-ask call asks', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  await service.setApprovalPolicy({ neverAsk: ['ship'], alwaysAsk: ['echo'] });
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const parent = await service.rootControls().spawn({
    name: 'parent',
    task: 'delegate',
    kernel: scripted([
      {
        type: 'spawn',
        as: 'kid',
        request: {
          name: 'kid',
          task: 'ship, then echo',
          kernel: scripted([shipStep('grandchild'), { type: 'tool', tool: 'echo', input: 'asked' }]),
        },
      },
      { type: 'wait', on: ['kid'], timeoutMs: 120_000 },
    ]),
  });
  const interaction = await inbox.interaction(
    (
      await eventually(
        () => service.rootControls().listThreads(),
        (threads) => threads.some((thread) => thread.name === 'kid'),
        'the grandchild',
      )
    ).find((thread) => thread.name === 'kid')!.id,
  );
  expect(interaction.body).toMatchObject({ tool: { name: 'echo' } });
  expect(ship.runs).toContain('grandchild');
  await resolveNotification(temporal.client, interaction, approve, { capability: service.rootCapability });
  expect(await resultOf(service, parent)).toBe('asked');
  expect(inbox.interactions).toHaveLength(1);
  await inbox.close();
});

test('no longer always-ask: a waiting call of a tool that needs no approval is released, one that declares it still waits', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    approvalPolicy: { alwaysAsk: ['echo', 'ship'] },
  });
  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const root = service.rootControls();
  const echoer = await root.spawn({
    name: 'echoer',
    task: 'echo',
    kernel: scripted([{ type: 'tool', tool: 'echo', input: 'released' }]),
  });
  const shipper = await root.spawn({
    name: 'shipper',
    task: 'ship',
    kernel: scripted([shipStep('still-asks')]),
  });
  const echoCall = await inbox.interaction(echoer.id);
  const shipCall = await inbox.interaction(shipper.id);
  await service.setApprovalPolicy({ alwaysAsk: [] });
  expect(await resultOf(service, echoer)).toBe('released');
  expect((await inbox.settlement(echoCall.body.requestId)).body).toMatchObject({
    detail: expect.stringContaining('by the approval policy (not-needed)'),
  });
  // Ship declares needsApproval itself: a person still answers it (the push has reached it, the call waits).
  await untilPolicyPushes(temporal.client, shipper.id, 1);
  expect((await service.rootControls().loadThread(shipper.id))?.status).toBe('running');
  await resolveNotification(temporal.client, shipCall, approve, { capability: service.rootCapability });
  expect(await resultOf(service, shipper)).toBe('shipped still-asks');
  await inbox.close();
});
