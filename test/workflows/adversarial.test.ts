// SPEC S2.4 (and S4.3, S4.4, S5.3, S5.4): hostile input at the public entries is rejected with the right
// KitError kind, and nothing changes: counters, the listing and the conversation summary are compared
// before and after.
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import {
  conversationSummary,
  publishNotificationsWithReceipt,
  resolveNotification,
} from '../../client/conversations';
import { ThreadControls, ThreadService } from '../../client/thread-service';
import { executeUpdate } from '../../client/updates';
import { ErrorKind } from '../../domain/errors';
import { spawnUpdate } from '../../domain/messages';
import { newId, relatedId } from '../../domain/ids';
import { randomUUID } from 'node:crypto';
import { approvalBody } from '../helpers/conversations';
import { attachRun, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('adversarial');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const twoMiB = 'x'.repeat(2 * 1024 * 1024 + 1);
// 30 turns of 80 KB replies: every text is within its own limit, the whole spec is not (and would stall
// the root: its workflow task's answer would pass Temporal's 4 MiB message limit).
// Over the spec limit but small enough that the rejection, which echoes the request, fits a task's answer.
const mediumScript = {
  type: 'scripted' as const,
  turns: Array.from({ length: 7 }, () => [{ type: 'reply' as const, text: 'y'.repeat(80_000) }]),
};
const bigScript = {
  type: 'scripted' as const,
  turns: Array.from({ length: 30 }, () => [{ type: 'reply' as const, text: 'y'.repeat(80_000) }]),
};

test('forged ids, wrong types, out-of-scope calls, reused request ids and huge payloads change nothing', async () => {
  const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', maxTotal: 5 } });
  const root = service.rootControls();
  const requestId = newId('request', randomUUID);
  const child = await root.spawn({ requestId, task: 'a', name: 'a' });
  const other = await root.spawn({ task: 'b', name: 'b' });
  await untilTurns(service, child.id, 1);
  await untilTurns(service, other.id, 1);
  const before = { counters: await service.counters(), threads: await root.listThreads() };
  const childControls = new ThreadControls(service.handle, await service.capabilityOf(child.id));

  const cases: [string, Promise<unknown>, string][] = [
    ['malformed thread id', root.sendMessage({ recipient: 'thread_XYZ', content: 'hi' }), ErrorKind.Protocol],
    [
      'wrong type of content',
      root.sendMessage({ recipient: child.id, content: 42 as never }),
      ErrorKind.Protocol,
    ],
    ['unknown field', root.spawn({ task: 't', owner: 'me' } as never), ErrorKind.Protocol],
    ['name with bad characters', root.spawn({ task: 't', name: '../x' }), ErrorKind.Protocol],
    ['task over 2 MiB', root.spawn({ task: twoMiB }), ErrorKind.Protocol],
    ['message over 2 MiB', root.sendMessage({ recipient: child.id, content: twoMiB }), ErrorKind.Protocol],
    [
      'spec over its byte limit (many steps)',
      root.spawn({ task: 't', kernel: bigScript }),
      ErrorKind.Protocol,
    ],
    [
      'spec over its byte limit, sent past the client checks',
      executeUpdate(
        service.handle,
        spawnUpdate,
        [root.capability, { task: 't', kernel: mediumScript } as never],
        'spawn',
      ),
      ErrorKind.Protocol,
    ],
    [
      'root spec over its byte limit',
      attachRun(temporal.client, taskQueue, { root: { task: 't', kernel: bigScript } }),
      ErrorKind.Protocol,
    ],
    [
      'forged recipient',
      root.sendMessage({ recipient: newId('thread', randomUUID), content: 'x' }),
      ErrorKind.PermissionDenied,
    ],
    [
      'sibling message (out of scope)',
      childControls.sendMessage({ recipient: other.id, content: 'x' }),
      ErrorKind.PermissionDenied,
    ],
    ['interrupt outside the subtree', childControls.interrupt(other.id), ErrorKind.PermissionDenied],
    ['close outside the subtree', childControls.close(other.id), ErrorKind.PermissionDenied],
    ['reused request id, other body', root.spawn({ requestId, task: 'different' }), ErrorKind.Conflict],
    ['malformed interrupt id', root.interrupt('nope'), ErrorKind.Protocol],
    ['malformed load id', root.loadThread('thread_'), ErrorKind.Protocol],
    ['negative wait timeout', root.wait({ threadIds: [child.id], timeoutMs: -1 }), ErrorKind.Protocol],
    [
      'reopen a forged root',
      ThreadService.reopen(temporal.client, newId('thread', randomUUID), service.capability),
      ErrorKind.NotFound,
    ],
    [
      'reopen a malformed root',
      ThreadService.reopen(temporal.client, 'root', service.capability),
      ErrorKind.Protocol,
    ],
    [
      'reopen with another run key',
      ThreadService.reopen(temporal.client, service.rootThreadId, 'a'.repeat(64)),
      ErrorKind.PermissionDenied,
    ],
    [
      'reopen with a malformed capability',
      ThreadService.reopen(temporal.client, service.rootThreadId, 'secret'),
      ErrorKind.Protocol,
    ],
  ];
  const kinds = await Promise.all(cases.map(async ([, call]) => (await kitErrorOf(call)).kind));
  expect(cases.map(([what], index) => `${what}: ${kinds[index]}`)).toEqual(
    cases.map(([what, , kind]) => `${what}: ${kind}`),
  );
  // A forged capability: a thread of no run, or the child claiming to be the root, calling into this run.
  const forgedScope = new ThreadControls(service.handle, {
    rootId: service.rootThreadId,
    threadId: newId('thread', randomUUID),
    lineage: [service.rootThreadId],
    proof: '0'.repeat(64),
  });
  expect((await kitErrorOf(forgedScope.spawn({ task: 'x' }))).kind).toBe(ErrorKind.PermissionDenied);
  const claimsRoot = new ThreadControls(service.handle, {
    ...childControls.capability,
    threadId: service.rootThreadId,
    lineage: [],
  });
  expect((await kitErrorOf(claimsRoot.spawn({ task: 'x' }))).kind).toBe(ErrorKind.PermissionDenied);
  expect((await kitErrorOf(claimsRoot.sendMessage({ recipient: other.id, content: 'x' }))).kind).toBe(
    ErrorKind.PermissionDenied,
  );
  // Out of scope reads are null, never an error that leaks existence (S4.4).
  expect(await childControls.loadThread(other.id)).toBeNull();

  expect(await service.counters()).toEqual(before.counters);
  expect(await root.listThreads()).toEqual(before.threads);
  expect((await root.loadThread(child.id))?.turnsStarted).toBe(
    before.threads.find((t) => t.id === child.id)?.turnsStarted,
  );
  await service.shutdown();
});

test('conversation entries reject malformed ids, a second lease holder, wrong answers and huge payloads, changing nothing', async () => {
  const threadId = newId('thread', randomUUID);
  const conversationId = relatedId('conversation', threadId);
  const interaction = approvalBody(threadId);
  await publishNotificationsWithReceipt(temporal.client, conversationId, [{ body: interaction }], {
    taskQueue,
  });
  const holder = await ConversationNotificationReceiver.open(temporal.client, conversationId, { taskQueue });
  const before = await conversationSummary(temporal.client, conversationId);
  const cases: [string, Promise<unknown>, string][] = [
    [
      'malformed conversation id',
      conversationSummary(temporal.client, 'conversation_123'),
      ErrorKind.Protocol,
    ],
    [
      'second receiver while the lease is live',
      ConversationNotificationReceiver.open(temporal.client, conversationId, { taskQueue }),
      ErrorKind.Conflict,
    ],
    [
      'ttl of the wrong type',
      ConversationNotificationReceiver.open(temporal.client, conversationId, {
        taskQueue,
        ttlMs: 'long' as never,
      }),
      ErrorKind.Protocol,
    ],
    [
      'answer of the wrong kind',
      resolveNotification(temporal.client, { body: interaction }, { type: 'question', text: 'yes' }),
      ErrorKind.Protocol,
    ],
    [
      'forged request id',
      resolveNotification(
        temporal.client,
        { threadId, requestId: newId('request', randomUUID) },
        { type: 'approval', approved: true },
      ),
      ErrorKind.NotFound,
    ],
    [
      'malformed notification body',
      publishNotificationsWithReceipt(
        temporal.client,
        conversationId,
        [{ body: { type: 'shout' } as never }],
        {
          taskQueue,
        },
      ),
      ErrorKind.Protocol,
    ],
  ];
  const kinds = await Promise.all(cases.map(async ([, call]) => (await kitErrorOf(call)).kind));
  expect(cases.map(([what], index) => `${what}: ${kinds[index]}`)).toEqual(
    cases.map(([what, , kind]) => `${what}: ${kind}`),
  );
  expect(await conversationSummary(temporal.client, conversationId)).toEqual(before);
  await holder[Symbol.asyncDispose]();
  await temporal.client.workflow.getHandle(conversationId).terminate('test done');
});

test('a notification over 2 MiB is rejected as Protocol before it reaches Temporal', async () => {
  const { conversationId } = { conversationId: relatedId('conversation', newId('thread', randomUUID)) };
  const error = await kitErrorOf(
    publishNotificationsWithReceipt(
      temporal.client,
      conversationId,
      [{ body: { type: 'message', text: twoMiB } }],
      {
        taskQueue,
      },
    ),
  );
  expect(error.kind).toBe(ErrorKind.Protocol);
});
