import { Client } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { randomUUID } from 'node:crypto';
import { kitCall } from '../../client/errors';
import { ThreadService } from '../../client/thread-service';
import { spawnUpdate } from '../../domain/messages';
import { newId } from '../../domain/ids';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('admission');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

describe('attach (S3.2) and reopen (S3.3)', () => {
  test('a second attachment of a running root is a Conflict', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const error = await kitErrorOf(
      attachRun(temporal.client, taskQueue, { rootThreadId: service.rootThreadId }),
    );
    expect(error.kind).toBe('Conflict');
    expect(error.message).toContain('already attached');
  });

  test('a root that already has children is InvalidState: it must be reopened', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    await service.rootControls().spawn({ task: 'exist' });
    const error = await kitErrorOf(
      attachRun(temporal.client, taskQueue, { rootThreadId: service.rootThreadId }),
    );
    expect(error.kind).toBe('InvalidState');
    expect(error.message).toMatch(/1 sub-agents: reopen/);
  });

  test('a root that has finished is stale: InvalidState', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      grant: { owner: 'tests', idleTimeoutMs: 200 },
    });
    await service.handle.result();
    const error = await kitErrorOf(
      attachRun(temporal.client, taskQueue, { rootThreadId: service.rootThreadId }),
    );
    expect(error.kind).toBe('InvalidState');
    expect(error.message).toMatch(/already finished/);
  });

  test.each(['complete', 'shutdown'] as const)(
    'attach right after %s() returned is InvalidState: the run has closed by then',
    async (finish) => {
      const service = await attachRun(temporal.client, taskQueue);
      await service.rootControls().spawn({ task: 'be closed' });
      await service[finish]();
      expect((await service.handle.describe()).status.name).not.toBe('RUNNING');
      const error = await kitErrorOf(
        attachRun(temporal.client, taskQueue, { rootThreadId: service.rootThreadId }),
      );
      expect(error.kind).toBe('InvalidState');
      // Idempotent after the close too: the same report again.
      expect((await service[finish]()).cancelled).toHaveLength(1);
    },
  );

  test('a grant of another owner or another root is PermissionDenied, and starts nothing', async () => {
    const rootThreadId = newId('thread', randomUUID);
    const wrongOwner = await kitErrorOf(
      attachRun(temporal.client, taskQueue, { rootThreadId, grant: { owner: 'someone-else' } }),
    );
    expect(wrongOwner.kind).toBe('PermissionDenied');
    const wrongRoot = await kitErrorOf(
      attachRun(temporal.client, taskQueue, {
        rootThreadId,
        grant: { owner: 'tests', rootThreadId: newId('thread', randomUUID) },
      }),
    );
    expect(wrongRoot.kind).toBe('PermissionDenied');
    expect((await kitErrorOf(ThreadService.reopen(temporal.client, rootThreadId, 'a'.repeat(64)))).kind).toBe(
      'NotFound',
    );
  });

  test('an exhausted budget is QuotaExceeded', async () => {
    const error = await kitErrorOf(
      attachRun(temporal.client, taskQueue, {
        grant: { owner: 'tests', budgetTokens: 100, spentTokens: 100 },
      }),
    );
    expect(error.kind).toBe('QuotaExceeded');
  });

  test('malformed attach input is a Protocol error naming the field', async () => {
    const error = await kitErrorOf(attachRun(temporal.client, taskQueue, { rootThreadId: 'thread_XYZ' }));
    expect(error).toMatchObject({ kind: 'Protocol' });
    expect(error.message).toContain('rootThreadId');
    const grant = await kitErrorOf(
      attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', maxDepth: -1 } }),
    );
    expect(grant.message).toContain('maxDepth');
  });

  test('reopen reads the real counters after the attaching client is gone', async () => {
    const connection = await connectTest({ address: temporal.address });
    const service = await attachRun(new Client({ connection }), taskQueue);
    await service.rootControls().spawn({ task: 'one' });
    await service.rootControls().spawn({ task: 'two' });
    await connection.close();
    const reopened = await ThreadService.reopen(temporal.client, service.rootThreadId, service.capability);
    expect(await reopened.counters()).toEqual({ live: 2, total: 2, tokens: 0, admissionOpen: true });
    expect((await reopened.rootControls().listThreads()).map((thread) => thread.path)).toEqual([
      '/root',
      '/root/agent-1',
      '/root/agent-2',
    ]);
  });
});

describe('spawn admission (S4.1)', () => {
  async function concurrentSpawns(limits: { maxConcurrent: number; maxTotal: number }) {
    const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', ...limits } });
    // Five independent clients, each with its own connection, race ten spawns each.
    const callers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const connection = await connectTest({ address: temporal.address });
        return {
          connection,
          service: await ThreadService.reopen(
            new Client({ connection }),
            service.rootThreadId,
            service.capability,
          ),
        };
      }),
    );
    const outcomes = await Promise.allSettled(
      callers.flatMap((caller) =>
        Array.from({ length: 10 }, () => caller.service.rootControls().spawn({ task: 'count me' })),
      ),
    );
    await Promise.all(callers.map((caller) => caller.connection.close()));
    const admitted = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const rejected = outcomes.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as { kind?: string }] : [],
    );
    return { service, admitted, rejected };
  }

  test('50 concurrent spawns against maxConcurrent 10: exactly 10 admitted, 40 QuotaExceeded, counters exact', async () => {
    const { service, admitted, rejected } = await concurrentSpawns({ maxConcurrent: 10, maxTotal: 20 });
    expect(admitted).toHaveLength(10);
    expect(rejected).toHaveLength(40);
    expect(new Set(rejected.map((error) => error.kind))).toEqual(new Set(['QuotaExceeded']));
    expect(await service.counters()).toMatchObject({ live: 10, total: 10 });
    expect(await service.rootControls().listThreads()).toHaveLength(11);
  });

  test('50 concurrent spawns against maxTotal 20: exactly 20 admitted, 30 QuotaExceeded', async () => {
    const { service, admitted, rejected } = await concurrentSpawns({ maxConcurrent: 100, maxTotal: 20 });
    expect(admitted).toHaveLength(20);
    expect(rejected.map((error) => error.kind)).toEqual(Array(30).fill('QuotaExceeded'));
    expect(await service.counters()).toMatchObject({ live: 20, total: 20 });
  });

  test('the depth limit stops a grandchild, and the child learns why', async () => {
    const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', maxDepth: 1 } });
    const child = await service.rootControls().spawn({
      task: 'try to delegate',
      kernel: { type: 'scripted', turns: [[{ type: 'spawn', request: { task: 'too deep' } }]] },
    });
    const done = await untilTurns(service, child.id, 1);
    expect(done.latestTurn?.status).toBe('failed');
    expect(done.latestTurn?.error).toEqual({
      kind: 'QuotaExceeded',
      message: 'maxDepth 1 reached: thread /root/agent-1 cannot spawn',
    });
    expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
  });

  test('a narrower limit on a child applies to its subtree', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const child = await service.rootControls().spawn({
      task: 'delegate twice',
      limits: { maxTotal: 1 },
      kernel: {
        type: 'scripted',
        turns: [
          [
            { type: 'spawn', as: 'first', request: { task: 'ok' } },
            { type: 'spawn', request: { task: 'one too many' } },
          ],
        ],
      },
    });
    const done = await untilTurns(service, child.id, 1);
    expect(done.latestTurn?.error?.kind).toBe('QuotaExceeded');
    expect(done.latestTurn?.error?.message).toMatch(/maxTotal 1 reached in subtree \/root\/agent-1/);
    expect(await service.counters()).toMatchObject({ total: 2 });
  });

  test('token usage is charged to the budget; once spent, spawns are QuotaExceeded', async () => {
    const service = await attachRun(temporal.client, taskQueue, {
      grant: { owner: 'tests', budgetTokens: 100 },
    });
    const spender = await service.rootControls().spawn({
      task: 'spend',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'spent', tokens: 150 }]] },
    });
    await untilTurns(service, spender.id, 1);
    expect((await service.counters()).tokens).toBe(150);
    const error = await kitErrorOf(service.rootControls().spawn({ task: 'too late' }));
    expect(error.kind).toBe('QuotaExceeded');
    expect(error.message).toMatch(/token budget 100 exhausted/);
  });

  test('a revoked grant refuses spawns with PermissionDenied', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    await service.revokeGrant();
    const error = await kitErrorOf(service.rootControls().spawn({ task: 'no' }));
    expect(error.kind).toBe('PermissionDenied');
    expect(await service.counters()).toMatchObject({ total: 0 });
  });

  test('spawn is idempotent per request id; a different body under the same id is a Conflict', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const requestId = newId('request', randomUUID);
    const first = await service.rootControls().spawn({ task: 'once', requestId });
    const again = await service.rootControls().spawn({ requestId, task: 'once' });
    expect(again.id).toBe(first.id);
    const conflict = await kitErrorOf(service.rootControls().spawn({ task: 'something else', requestId }));
    expect(conflict.kind).toBe('Conflict');
    expect(conflict.details).toEqual({ requestId, threadId: first.id });
    expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
  });

  test('a malformed spawn request is rejected before anything changes', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const error = await kitErrorOf(service.rootControls().spawn({ task: 'x', name: 'Bad Name!' }));
    expect(error.kind).toBe('Protocol');
    expect(error.message).toContain('name');
    // The workflow's validator refuses it too, for callers that skip the client library.
    const raw = await kitErrorOf(
      kitCall('spawn', () =>
        service.handle.executeUpdate(spawnUpdate, {
          args: [service.rootCapability, { task: 'x', depth: 7 } as never],
        }),
      ),
    );
    expect(raw).toMatchObject({ kind: 'Protocol', details: { fields: [''] } });
    expect(raw.message).toContain('depth');
    expect(await service.counters()).toMatchObject({ total: 0 });
  });

  test('a spawned thread has a canonical path and is found through its parent', async () => {
    const service = await attachRun(temporal.client, taskQueue);
    const child = await service.rootControls().spawn({
      task: 'lead',
      name: 'lead',
      kernel: {
        type: 'scripted',
        turns: [
          [
            { type: 'spawn', as: 'w', request: { task: 'work', name: 'worker' } },
            { type: 'reply', text: '{{last}}' },
          ],
        ],
      },
    });
    const done = await untilTurns(service, child.id, 1);
    const grandchild = await eventually(
      () => service.rootControls().loadThread(done.latestTurn!.result!),
      (thread) => thread !== null,
      'grandchild',
    );
    expect(grandchild).toMatchObject({
      path: '/root/lead/worker',
      depth: 2,
      parentId: child.id,
      rootId: service.rootThreadId,
    });
  });
});
