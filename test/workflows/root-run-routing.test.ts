import { Client } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { randomUUID } from 'node:crypto';
import { ThreadControls } from '../../client/thread-service';
import { KitError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { mailboxQuery } from '../../domain/messages';
import { searchAttributes } from '../../domain/search-attributes';
import type { ScriptStepShape } from '../../domain/schemas';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('routing');
const remoteQueue = uniqueTaskQueue('remote');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
  await temporal.startWorker({ taskQueue: remoteQueue });
});
afterAll(async () => temporal?.close());

const script = (...turns: ScriptStepShape[][]) => ({ type: 'scripted' as const, turns });

describe('scope (S4.3, S4.4)', () => {
  test('an agent sees only its subtree and messages only its ancestors and descendants', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const sibling = await root.spawn({ task: 'be a sibling', name: 'sibling' });
    const probe = await root.spawn({
      task: 'probe the scope rules',
      name: 'probe',
      kernel: script(
        [
          { type: 'spawn', as: 'kid', request: { task: 'be a kid', name: 'kid' } },
          { type: 'load', target: sibling.id },
          { type: 'reply', text: 'sibling={{last}}' },
        ],
        [{ type: 'list' }, { type: 'reply', text: '{{last}}' }],
        [
          { type: 'load', target: 'kid' },
          { type: 'reply', text: '{{last}}' },
        ],
        [{ type: 'send', to: sibling.id, content: 'psst' }],
        [
          { type: 'send', to: 'kid', content: 'to my kid' },
          { type: 'send', to: 'root', content: 'to the root' },
          { type: 'reply', text: 'sent' },
        ],
        [
          { type: 'spawn', request: { task: 'escape', tools: ['sleep'] } },
          { type: 'tool', tool: 'echo', input: 'x' },
        ],
      ),
    });
    const nextTurn = async (turn: number) => {
      if (turn > 1) await root.sendMessage({ recipient: probe.id, content: `go ${turn}`, triggerTurn: true });
      return (await untilTurns(service, probe.id, turn)).latestTurn!;
    };
    expect((await nextTurn(1)).result).toBe('sibling=null');
    expect(JSON.parse((await nextTurn(2)).result!)).toEqual(['/root/probe', '/root/probe/kid']);
    expect(JSON.parse((await nextTurn(3)).result!)).toMatchObject({
      path: '/root/probe/kid',
      parentId: probe.id,
    });
    const outOfScope = await nextTurn(4);
    expect(outOfScope.status).toBe('failed');
    expect(outOfScope.error?.kind).toBe('PermissionDenied');
    expect((await nextTurn(5)).result).toBe('sent');
    expect((await service.takeRootMessages()).map((message) => [message.sender, message.content])).toEqual([
      [probe.id, 'to the root'],
    ]);
    // The root's own view covers everyone; the sibling never received the forbidden message.
    expect((await root.listThreads()).map((thread) => thread.path).sort()).toEqual([
      '/root',
      '/root/probe',
      '/root/probe/kid',
      '/root/sibling',
    ]);
    expect((await temporal.client.workflow.getHandle(sibling.id).query(mailboxQuery)).received).toEqual([]);
    // A child's tools are the intersection with its parent's: the grandchild may not run echo.
    const toolless = await root.spawn({
      task: 'no tools',
      tools: [],
      kernel: script([{ type: 'tool', tool: 'echo', input: 1 }]),
    });
    expect((await untilTurns(service, toolless.id, 1)).latestTurn?.error?.kind).toBe('PermissionDenied');
  });

  test('forged identities are rejected: caller fields in bodies, scopes of other runs or unknown threads', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const other = await attachRun(temporal.client, taskQueue);
    const child = await service.rootControls().spawn({ task: 'target' });
    const root = service.rootControls();
    const forgedBody = await kitErrorOf(
      root.sendMessage({ recipient: child.id, content: 'x', sender: other.rootThreadId } as never),
    );
    expect(forgedBody.kind).toBe('Protocol');
    expect(forgedBody.message).toMatch(/sender/);
    expect((await kitErrorOf(root.spawn({ task: 'x', callerId: child.id } as never))).kind).toBe('Protocol');
    // A scope naming another run's root, or a thread that is not in this run, is refused.
    const foreign = new ThreadControls(service.handle, other.rootCapability);
    expect((await kitErrorOf(foreign.spawn({ task: 'x' }))).kind).toBe('PermissionDenied');
    expect((await kitErrorOf(foreign.sendMessage({ recipient: child.id, content: 'x' }))).kind).toBe(
      'PermissionDenied',
    );
    const stranger = new ThreadControls(service.handle, {
      rootId: service.rootThreadId,
      threadId: newId('thread', randomUUID),
      lineage: [service.rootThreadId],
      proof: 'f'.repeat(64),
    });
    expect((await kitErrorOf(stranger.sendMessage({ recipient: child.id, content: 'x' }))).kind).toBe(
      'PermissionDenied',
    );
    expect((await kitErrorOf(stranger.listThreads())).kind).toBe('PermissionDenied');
    expect(await service.counters()).toMatchObject({ total: 1 });
    // An agent's scope is its own: a child acting through the host cannot see its parent's other children.
    const childScope = new ThreadControls(service.handle, await service.capabilityOf(child.id));
    expect(await childScope.loadThread(service.rootThreadId)).toBeNull();
    expect((await childScope.listThreads()).map((thread) => thread.id)).toEqual([child.id]);
  });
});

describe('messages (S4.3, S3.7)', () => {
  test('200 messages from several senders arrive exactly once, in per-recipient sequence order', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const burst = (label: string): ScriptStepShape[] =>
      Array.from({ length: 50 }, (_, index) => ({
        type: 'send',
        to: 'parent',
        content: `${label}-${index}`,
      }));
    const hub = await root.spawn({
      task: 'receive',
      name: 'hub',
      kernel: script(
        [
          { type: 'spawn', as: 'a', request: { task: 'send a', name: 'a', kernel: script(burst('a')) } },
          { type: 'spawn', as: 'b', request: { task: 'send b', name: 'b', kernel: script(burst('b')) } },
        ],
        [{ type: 'reply', text: 'later turn' }],
      ),
    });
    // Once the hub's first turn has taken its (empty) inbox, nothing sent from now on is consumed by it.
    await eventually(
      () => root.loadThread(hub.id),
      (thread) => (thread?.turnsStarted ?? 0) >= 1,
      'the hub turn',
    );
    // The root sends 100 more from five connections at once while the two children send theirs.
    const senders = await Promise.all(
      Array.from({ length: 5 }, () => connectTest({ address: temporal.address })),
    );
    await Promise.all(
      senders.map(async (connection, sender) => {
        const controls = new ThreadControls(
          new Client({ connection }).workflow.getHandle(service.rootThreadId),
          root.capability,
        );
        for (let index = 0; index < 20; index++)
          await controls.sendMessage({ recipient: hub.id, content: `root${sender}-${index}` });
      }),
    );
    await Promise.all(senders.map((connection) => connection.close()));
    const hubHandle = temporal.client.workflow.getHandle(hub.id);
    const { received } = await eventually(
      () => hubHandle.query(mailboxQuery),
      (view) => view.received.length >= 200,
      '200 deliveries',
      120_000,
    );
    expect(received).toHaveLength(200);
    expect(received.map((message) => message.seq)).toEqual(
      Array.from({ length: 200 }, (_, index) => index + 1),
    );
    expect(new Set(received.map((message) => message.id)).size).toBe(200);
    expect(new Set(received.map((message) => message.content)).size).toBe(200);
    // Each sender's messages keep the order it sent them in.
    for (const prefix of ['a-', 'b-', 'root0-', 'root3-']) {
      const mine = received
        .filter((message) => message.content.startsWith(prefix))
        .map((message) => Number(message.content.slice(prefix.length)));
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
      expect(mine).toHaveLength(prefix.startsWith('root') ? 20 : 50);
    }
    // None triggered a turn, so all 200 wait for the next one.
    expect((await root.loadThread(hub.id))?.turnsStarted).toBe(1);
    expect(received.every((message) => message.consumedInTurn === undefined)).toBe(true);
  }, 180_000);

  test('triggerTurn starts a turn on an idle thread; a message without it waits for the next turn', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const worker = await root.spawn({
      task: 'answer',
      kernel: script([{ type: 'reply', text: 'turn one' }], [{ type: 'reply', text: 'got: {{inbox}}' }]),
    });
    await untilTurns(service, worker.id, 1);
    const quiet = await root.sendMessage({ recipient: worker.id, content: 'no hurry' });
    expect(quiet).toMatchObject({
      sender: service.rootThreadId,
      recipient: worker.id,
      seq: 1,
      triggerTurn: false,
    });
    expect(quiet.id).toMatch(/^message_[0-9a-f]{32}$/);
    const waited = await root.wait({ threadIds: [worker.id], timeoutMs: 0 });
    expect(waited.outcomes[0]).toMatchObject({ status: 'idle', latestTurn: { turn: 1 } });
    await root.sendMessage({ recipient: worker.id, content: 'now please', triggerTurn: true });
    const second = await untilTurns(service, worker.id, 2);
    expect(second.latestTurn?.result).toBe('got: no hurry\nnow please');
    const { received } = await temporal.client.workflow.getHandle(worker.id).query(mailboxQuery);
    expect(received.map((message) => [message.seq, message.consumedInTurn])).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  test('large messages waiting for one thread are bounded by bytes (QuotaExceeded); the next turn takes them all and frees the room', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const reader = await root.spawn({
      task: 'read long mail',
      kernel: script([{ type: 'reply', text: 'ready' }], [{ type: 'reply', text: 'read them' }]),
    });
    await untilTurns(service, reader.id, 1);
    const page = (index: number) => `${index}:${'long message '.repeat(7_690)}`; // ~100 KB each
    const sent: string[] = [];
    let refusal: unknown;
    while (refusal === undefined && sent.length < 20) {
      const content = page(sent.length);
      refusal = await root.sendMessage({ recipient: reader.id, content }).then(
        () => void sent.push(content),
        (error: unknown) => error,
      );
    }
    if (!(refusal instanceof KitError)) throw new Error(`expected a refusal, got ${String(refusal)}`);
    expect(refusal.kind).toBe('QuotaExceeded');
    expect(refusal.details).toEqual({ limit: 'waitingBytes', value: 512 * 1024 });
    expect(sent).toHaveLength(5);
    await root.sendMessage({ recipient: reader.id, content: 'last', triggerTurn: true });
    expect((await untilTurns(service, reader.id, 2)).latestTurn?.result).toBe('read them');
    // The turn reported the bytes it consumed: the room is back.
    const again = await eventually(
      () => root.sendMessage({ recipient: reader.id, content: page(99) }),
      (message) => message.seq === 7,
      'a send accepted after the turn',
    );
    expect(again.seq).toBe(7);
    // The consumed log keeps only the start of each long message.
    const { received } = await temporal.client.workflow.getHandle(reader.id).query(mailboxQuery);
    expect(received.slice(0, 6).map((message) => message.consumedInTurn)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(received[0]?.content).toMatch(/^0:long message .*… \[\d+ more characters, consumed in turn 2\]$/);
    expect(received[0]!.content.length).toBeLessThan(300);
  }, 120_000);

  test('takeRootMessages drains in order, once; the sender stays in the envelope', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const child = await service.rootControls().spawn({
      task: 'report',
      kernel: script([1, 2, 3].map((index) => ({ type: 'send', to: 'root', content: `report ${index}` }))),
    });
    await untilTurns(service, child.id, 1);
    const drained = await service.takeRootMessages();
    expect(drained.map((message) => [message.seq, message.sender, message.content])).toEqual([
      [1, child.id, 'report 1'],
      [2, child.id, 'report 2'],
      [3, child.id, 'report 3'],
    ]);
    expect(await service.takeRootMessages()).toEqual([]);
    const childScope = new ThreadControls(service.handle, await service.capabilityOf(child.id));
    expect((await kitErrorOf(childScope.takeRootMessages())).kind).toBe('PermissionDenied');
  });

  test('a terminal recipient is Closed', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      grant: { owner: 'tests', idleTimeoutMs: 300 },
    });
    const child = await service.rootControls().spawn({ task: 'finish fast' });
    await eventually(
      () => service.rootControls().loadThread(child.id),
      (thread) => thread?.status === 'completed',
      'child completion',
    );
    expect(
      (await kitErrorOf(service.rootControls().sendMessage({ recipient: child.id, content: 'too late' })))
        .kind,
    ).toBe('Closed');
  });
});

describe('remote spawn (S4.2)', () => {
  test('a remote spawn runs on the target fleet; an unknown target is PermissionDenied', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      grant: { owner: 'tests', remoteTargets: { gpu: { taskQueue: remoteQueue } } },
    });
    const remote = await service.rootControls().spawnRemote({
      target: 'gpu',
      task: 'render',
      kernel: script([{ type: 'tool', tool: 'echo', input: 'rendered' }]),
    });
    expect(remote).toMatchObject({ taskQueue: remoteQueue, remoteTarget: 'gpu' });
    expect((await untilTurns(service, remote.id, 1)).latestTurn?.result).toBe('rendered');
    const description = await temporal.client.workflow.getHandle(remote.id).describe();
    expect(description.taskQueue).toBe(remoteQueue);
    const error = await kitErrorOf(service.rootControls().spawnRemote({ target: 'tpu', task: 'nope' }));
    expect(error.kind).toBe('PermissionDenied');
    expect(await service.counters()).toMatchObject({ total: 1 });
  });
});

describe('Web UI inspection (S8.1)', () => {
  test('a visibility query by root thread id lists exactly that run, with summaries', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'inspect me', name: 'root' },
    });
    const other = await attachRun(temporal.client, taskQueue);
    await other.rootControls().spawn({ task: 'elsewhere' });
    const lead = await service.rootControls().spawn({
      task: 'lead a team',
      name: 'lead',
      kernel: script([
        { type: 'spawn', request: { task: 'help', name: 'helper' } },
        { type: 'reply', text: 'ok' },
      ]),
    });
    await untilTurns(service, lead.id, 1);
    const expected = (await service.rootControls().listThreads()).map((thread) => thread.id).sort();
    expect(expected).toHaveLength(3);
    const query = `${searchAttributes.rootThreadId.name} = "${service.rootThreadId}"`;
    const listed = await eventually(
      async () => {
        const ids: string[] = [];
        for await (const workflow of temporal.client.workflow.list({ query })) ids.push(workflow.workflowId);
        return ids.sort();
      },
      (ids) => ids.length === 3,
      'visibility to list the run',
    );
    expect(listed).toEqual(expected);
    const depthTwo = `${query} AND ${searchAttributes.depth.name} = 2 AND ${searchAttributes.parentThreadId.name} = "${lead.id}"`;
    const helpers = await eventually(
      async () => {
        const found = [];
        for await (const workflow of temporal.client.workflow.list({ query: depthTwo })) found.push(workflow);
        return found;
      },
      (found) => found.length === 1,
      'depth filter',
    );
    expect(helpers[0]!.searchAttributes).toBeDefined();
    const description = await temporal.client.workflow.getHandle(lead.id).describe();
    expect(await description.staticSummary()).toBe('/root/lead: lead a team');
    expect(await description.staticDetails()).toContain(`root run: ${service.rootThreadId}`);
  });
});
