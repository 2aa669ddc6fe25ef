import { WorkflowUpdateStage } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { newId } from '../../domain/ids';
import { interruptSignal, shutdownUpdate } from '../../domain/messages';
import type { ThreadChange } from '../../domain/control';
import type { ScriptStepShape } from '../../domain/schemas';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { slowTool } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('lifecycle');
const slow = slowTool();
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [slow.tool] }) });
});
afterAll(async () => temporal?.close());

const script = (...turns: ScriptStepShape[][]) => ({ type: 'scripted' as const, turns });
const slowStep = (label: string, ms = 120_000): ScriptStepShape => ({
  type: 'tool',
  tool: 'slow',
  input: { ms, label },
});

describe('interrupt (S4.6)', () => {
  test('an interrupt during a tool activity cancels it and leaves the thread idle and alive', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const label = randomUUID();
    const worker = await root.spawn({
      task: 'work long',
      kernel: script([slowStep(label)], [{ type: 'reply', text: 'back: {{inbox}}' }]),
    });
    await eventually(async () => slow.started.includes(label), Boolean, 'the tool to start');
    const receipt = await root.interrupt(worker.id);
    expect(receipt).toEqual({ thread: worker.id, cancellationRequested: true, interruptedTurn: 1 });
    await eventually(async () => slow.cancelled.includes(label), Boolean, 'the tool to see its cancellation');
    const idle = await untilTurns(service, worker.id, 1);
    expect(idle.status).toBe('idle');
    expect(idle.latestTurn?.status).toBe('interrupted');
    await root.sendMessage({ recipient: worker.id, content: 'carry on', triggerTurn: true });
    expect((await untilTurns(service, worker.id, 2)).latestTurn).toMatchObject({
      status: 'completed',
      result: 'back: carry on',
    });
    expect(await root.interrupt(worker.id)).toEqual({ thread: worker.id, cancellationRequested: false });
  });

  test('an interrupt sent as a plain signal to the thread works the same', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const label = randomUUID();
    const worker = await service
      .rootControls()
      .spawn({ task: 'work long', kernel: script([slowStep(label)], [{ type: 'reply', text: 'again' }]) });
    await eventually(async () => slow.started.includes(label), Boolean, 'the tool to start');
    await temporal.client.workflow.getHandle(worker.id).signal(interruptSignal);
    await eventually(async () => slow.cancelled.includes(label), Boolean, 'the tool to see its cancellation');
    expect((await untilTurns(service, worker.id, 1)).latestTurn?.status).toBe('interrupted');
  });

  test('only ancestors may interrupt', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const first = await service.rootControls().spawn({ task: 'a' });
    const second = await service.rootControls().spawn({ task: 'b' });
    const { ThreadControls } = await import('../../client/thread-service');
    const sibling = new ThreadControls(service.handle, await service.capabilityOf(first.id));
    expect((await kitErrorOf(sibling.interrupt(second.id))).kind).toBe('PermissionDenied');
  });
});

describe('idle timeout (S4.9)', () => {
  test('a thread ends a full idle timeout after its last turn; its timer is not restarted per turn', async () => {
    // Long beside the 400 ms between turns: a loaded machine (or the cluster's PostgreSQL) can take
    // over a second to deliver a message, and the child must not end idle between its turns.
    const idleTimeoutMs = 6000;
    const label = randomUUID();
    // The root works on (a long tool call), so only the child idles.
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'stay busy', name: 'root', kernel: script([slowStep(label, 60_000)]) },
      grant: { owner: 'tests', idleTimeoutMs },
    });
    const root = service.rootControls();
    const reply = (text: string): ScriptStepShape[] => [{ type: 'reply', text }];
    const child = await root.spawn({
      task: 'reply',
      kernel: script(reply('one'), reply('two'), reply('three')),
    });
    for (let turn = 1; turn <= 3; turn++) {
      await untilTurns(service, child.id, turn);
      if (turn < 3) {
        await new Promise((done) => setTimeout(done, 400));
        await root.sendMessage({ recipient: child.id, content: 'next', triggerTurn: true });
      }
    }
    const last = await eventually(
      async () => (await root.loadThread(child.id))!,
      (thread) => thread.status === 'completed',
      'the child to end idle',
    );
    const handle = temporal.client.workflow.getHandle(child.id);
    // The root lists it ended once its end is reported, just before its workflow closes.
    const closed = (
      await eventually(
        () => handle.describe(),
        (description) => description.closeTime !== undefined,
        'the child workflow to close',
      )
    ).closeTime!.getTime();
    // A timer started in an earlier idle period fires early for the last one, which then waits the rest.
    expect(closed - Date.parse(last.latestTurn!.endedAt)).toBeGreaterThanOrEqual(idleTimeoutMs);
    const types = ((await handle.fetchHistory()).events ?? []).map((event) => event.eventType);
    const count = (type: number) => types.filter((candidate) => candidate === type).length;
    const { EventType } = proto.api.enums.v1;
    expect(count(EventType.EVENT_TYPE_TIMER_CANCELED)).toBe(0);
    expect(count(EventType.EVENT_TYPE_TIMER_STARTED)).toBeLessThanOrEqual(3);
    await service.shutdown();
  });
});

describe('subscriptions (S4.5) and wait (S4.7)', () => {
  test('subscribeFirstTurn returns the first turn after two more turns; subscribeThread streams every change to the end', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const worker = await root.spawn({
      task: 'count',
      kernel: script(
        [{ type: 'reply', text: 'first' }],
        [{ type: 'reply', text: 'second' }],
        [{ type: 'reply', text: 'third' }],
      ),
    });
    const seen: ThreadChange[] = [];
    const changes = (async () => {
      for await (const change of root.subscribeThread(worker.id)) seen.push(change);
      return seen;
    })();
    await untilTurns(service, worker.id, 1);
    for (const turn of [2, 3]) {
      await root.sendMessage({ recipient: worker.id, content: `turn ${turn}`, triggerTurn: true });
      await untilTurns(service, worker.id, turn);
    }
    expect(await root.subscribeFirstTurn(worker.id)).toMatchObject({ turn: 1, result: 'first' });
    // The subscriber sees every change while the thread lives (a watch poll left unanswered under load
    // is sent again after its deadline), then the end.
    await eventually(
      async () => seen.length,
      (count) => count >= 7,
      'the subscriber to see all seven changes',
      90_000,
    );
    await root.close(worker.id);
    await changes;
    expect(seen.map((change) => change.status)).toEqual([
      'pending',
      'running',
      'idle',
      'running',
      'idle',
      'running',
      'idle',
      'cancelled',
    ]);
    expect(seen.map((change) => change.version)).toEqual(seen.map((_, index) => index + 1));
    expect(
      seen.filter((change) => change.status === 'idle').map((change) => change.latestTurn?.result),
    ).toEqual(['first', 'second', 'third']);
  });

  test('wait returns on the first turn end, times out without inventing completion, and 0 is a snapshot', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const root = service.rootControls();
    const long = await root.spawn({ task: 'long', kernel: script([slowStep(randomUUID())]) });
    const quick = await root.spawn({
      task: 'quick',
      kernel: script([
        { type: 'tool', tool: 'sleep', input: { ms: 300 } },
        { type: 'reply', text: 'quick done' },
      ]),
    });
    const first = await root.wait({ threadIds: [long.id, quick.id], timeoutMs: 30_000 });
    expect(first.timedOut).toBe(false);
    expect(first.outcomes).toEqual([
      expect.objectContaining({ threadId: long.id, status: 'running' }),
      expect.objectContaining({
        threadId: quick.id,
        status: 'idle',
        latestTurn: expect.objectContaining({ result: 'quick done' }),
      }),
    ]);
    const timedOut = await root.wait({ threadIds: [long.id], timeoutMs: 300 });
    expect(timedOut).toMatchObject({ timedOut: true, outcomes: [{ threadId: long.id, status: 'running' }] });
    expect(timedOut.outcomes[0]!.latestTurn).toBeUndefined();
    const snapshot = await root.wait({ threadIds: [long.id, quick.id], timeoutMs: 0 });
    expect(snapshot.timedOut).toBe(false);
    expect((await root.wait({ threadIds: [long.id], timeoutMs: 0 })).timedOut).toBe(true);
    expect(
      (await kitErrorOf(root.wait({ threadIds: [newId('thread', randomUUID)], timeoutMs: 0 }))).kind,
    ).toBe('NotFound');
  });
});

describe('close, shutdown, complete (S4.8, S3.5, S3.8)', () => {
  const treeOfTen = () =>
    script([
      {
        type: 'spawn',
        as: 'c1',
        request: {
          task: 'c1',
          name: 'c1',
          kernel: script([
            {
              type: 'spawn',
              request: {
                task: 'g1',
                name: 'g1',
                kernel: script([
                  {
                    type: 'spawn',
                    request: { task: 'gg1', name: 'gg1', kernel: script([slowStep(randomUUID())]) },
                  },
                  { type: 'reply', text: 'ok' },
                ]),
              },
            },
            { type: 'spawn', request: { task: 'g2', name: 'g2' } },
            { type: 'reply', text: 'ok' },
          ]),
        },
      },
      {
        type: 'spawn',
        as: 'c2',
        request: {
          task: 'c2',
          name: 'c2',
          kernel: script([
            {
              type: 'spawn',
              request: {
                task: 'g3',
                name: 'g3',
                kernel: script([
                  { type: 'spawn', request: { task: 'gg2', name: 'gg2' } },
                  slowStep(randomUUID()),
                ]),
              },
            },
            { type: 'spawn', request: { task: 'g4', name: 'g4' } },
            { type: 'reply', text: 'ok' },
          ]),
        },
      },
      {
        type: 'spawn',
        as: 'c3',
        request: {
          task: 'c3',
          name: 'c3',
          kernel: script([{ type: 'spawn', request: { task: 'g5', name: 'g5' } }, slowStep(randomUUID())]),
        },
      },
      { type: 'reply', text: 'tree planted' },
    ]);

  test('shutdown of a depth-3 tree of 10 live threads cancels all, closes admission, and is idempotent', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'plant a tree', kernel: treeOfTen() },
    });
    await eventually(
      () => service.counters(),
      (counters) => counters.live === 10,
      '10 live threads',
    );
    const threads = await service.rootControls().listThreads();
    expect(Math.max(...threads.map((thread) => thread.depth))).toBe(3);
    // The first caller gives up after its shutdown was accepted; a second call finishes the join.
    const abandoned = await service.handle.startUpdate(shutdownUpdate, {
      args: [service.rootCapability],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    const report = await service.shutdown();
    expect([...report.cancelled].sort()).toEqual(
      threads
        .filter((thread) => thread.depth > 0)
        .map((thread) => thread.id)
        .sort(),
    );
    expect(report).toMatchObject({ failed: [], unconfirmed: [] });
    expect(await abandoned.result()).toEqual(report);
    expect(await service.shutdown()).toEqual(report);
    const result = await service.result();
    expect(result.root.status).toBe('cancelled');
    expect((await kitErrorOf(service.rootControls().spawn({ task: 'late' }))).kind).toBe('Closed');
    for (const thread of threads.filter((candidate) => candidate.depth > 0)) {
      const description = await temporal.client.workflow.getHandle(thread.id).describe();
      expect(description.status.name).toBe('COMPLETED');
    }
  });

  test('shutdown reports a thread whose end it could not confirm', async () => {
    const nowhere = uniqueTaskQueue('no-worker');
    const service = await attachRun(temporal.client, taskQueue, {
      shutdownGraceMs: 5000,
      grant: { owner: 'tests', remoteTargets: { void: { taskQueue: nowhere } } },
    });
    const lost = await service.rootControls().spawnRemote({ target: 'void', task: 'never runs' });
    const fine = await service.rootControls().spawn({ task: 'runs' });
    await untilTurns(service, fine.id, 1);
    const report = await service.shutdown();
    expect(report).toMatchObject({ cancelled: [fine.id], unconfirmed: [lost.id], failed: [] });
    await temporal.client.workflow.getHandle(lost.id).terminate('test cleanup');
  });

  test('close ends a descendant and its subtree as cancelled', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const lead = await service.rootControls().spawn({
      task: 'lead',
      name: 'lead',
      kernel: script([{ type: 'spawn', request: { task: 'help', name: 'helper' } }, slowStep(randomUUID())]),
    });
    const helper = await eventually(
      () => service.rootControls().listThreads(),
      (threads) => threads.length === 3,
      'helper',
    ).then((threads) => threads[2]!);
    const closed = await service.rootControls().close(lead.id);
    expect(closed.map((thread) => [thread.path, thread.status])).toEqual([
      ['/root/lead', 'cancelled'],
      ['/root/lead/helper', 'cancelled'],
    ]);
    expect(await service.counters()).toMatchObject({ live: 0, total: 2 });
    await eventually(
      () =>
        temporal.client.workflow
          .getHandle(helper.id)
          .describe()
          .catch(() => undefined),
      (description) => description?.status.name === 'COMPLETED',
      'helper workflow to end',
    );
    expect(
      (await kitErrorOf(service.rootControls().sendMessage({ recipient: lead.id, content: 'x' }))).kind,
    ).toBe('Closed');
  });

  test('a completed root closes every descendant; controls captured before fail with Closed', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const captured = service.rootControls();
    const child = await captured.spawn({ task: 'linger', kernel: script([slowStep(randomUUID())]) });
    const report = await service.complete();
    expect(report.cancelled).toEqual([child.id]);
    expect((await service.refreshRoot()).status).toBe('completed');
    expect((await kitErrorOf(captured.spawn({ task: 'after the end' }))).kind).toBe('Closed');
    expect((await kitErrorOf(captured.sendMessage({ recipient: child.id, content: 'x' }))).kind).toBe(
      'Closed',
    );
  });
});

describe('reconcile (S3.6)', () => {
  test('exact match returns the thread; reported-failed closes it; missing or different stays uncertain and keeps the quota', async () => {
    const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', maxTotal: 5 } });
    const root = service.rootControls();
    const committed = { task: 'committed', requestId: newId('request', randomUUID) };
    const thread = await root.spawn(committed);
    expect(await service.reconcile({ request: committed })).toEqual({
      status: 'committed',
      thread: expect.objectContaining({ id: thread.id }),
    });
    expect(await service.reconcile({ request: { ...committed, task: 'something else' } })).toEqual({
      status: 'uncertain',
      reason: 'different',
    });

    const reportedFailed = { task: 'reported failed', requestId: newId('request', randomUUID) };
    const started = await root.spawn(reportedFailed);
    const closed = await service.reconcile({ request: reportedFailed, reportedFailed: true });
    expect(closed).toMatchObject({ status: 'closed', thread: { id: started.id, status: 'cancelled' } });
    expect((await root.spawn(reportedFailed)).id).toBe(started.id);
    expect((await root.loadThread(started.id))?.status).toBe('cancelled');

    const missing = { task: 'never arrived', requestId: newId('request', randomUUID) };
    expect(await service.reconcile({ request: missing, reportedFailed: true })).toEqual({
      status: 'uncertain',
      reason: 'missing',
    });
    expect(await service.counters()).toMatchObject({ total: 3 });
    expect((await kitErrorOf(root.spawn(missing))).kind).toBe('Closed');
  });
});
