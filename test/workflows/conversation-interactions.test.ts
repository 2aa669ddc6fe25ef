import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import {
  conversationHandle,
  conversationSummary,
  publishNotifications,
  resolveNotification,
} from '../../client/conversations';
import { resolveNotificationUpdate } from '../../domain/conversation-messages';
import { ErrorKind, KitError } from '../../domain/errors';
import { kitCall } from '../../client/errors';
import { approvalBody, label, messageBody, newConversation, receiveMany } from '../helpers/conversations';
import { eventually } from '../helpers/runs';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('interactions', (connected) => (temporal = connected));

function conversation() {
  const ids = newConversation();
  started.push(ids.conversationId);
  return ids;
}

async function errorOf(promise: Promise<unknown>): Promise<KitError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof KitError)) throw new Error(`expected a KitError, got ${String(error)}`);
  return error;
}

test('S5.4: resolve at a standalone conversation is idempotent per request id and checks the answer', async () => {
  const { conversationId, threadId } = conversation();
  const interaction = approvalBody(threadId);
  await publishNotifications(temporal.client, conversationId, [{ body: interaction }], { taskQueue });
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
  });
  const received = await receiver.recv();
  expect(received?.body).toEqual(interaction);

  const wrongShape = await errorOf(
    resolveNotification(temporal.client, received!, { type: 'question', text: 'yes' }),
  );
  expect(wrongShape.kind).toBe(ErrorKind.Protocol);
  const notAnAnswer = await errorOf(
    resolveNotification(temporal.client, received!, { type: 'approval' } as never),
  );
  expect(notAnAnswer.kind).toBe(ErrorKind.Protocol);

  const answer = { type: 'approval', approved: true, reason: 'looks safe' } as const;
  const resolution = await resolveNotification(temporal.client, received!, answer);
  expect(resolution).toMatchObject({
    requestId: received!.body.type === 'interaction' && interaction.requestId,
  });
  expect(await resolveNotification(temporal.client, received!, answer)).toEqual(resolution);
  const conflict = await errorOf(
    resolveNotification(temporal.client, received!, { type: 'approval', approved: false }),
  );
  expect(conflict.kind).toBe(ErrorKind.Conflict);

  expect(await conversationSummary(temporal.client, conversationId)).toMatchObject({
    pendingInteractions: 0,
    resolvedInteractions: 1,
  });
});

test('S5.9: an interaction mirrored to the root is resolved there, settling origin and mirror', async () => {
  const root = conversation();
  const child = conversation();
  await publishNotifications(temporal.client, root.conversationId, [{ body: messageBody('root up') }], {
    taskQueue,
  });
  const interaction = approvalBody(child.threadId, 'delete the branch?');
  await publishNotifications(temporal.client, child.conversationId, [{ body: interaction }], {
    taskQueue,
    mirrorInteractionsTo: root.conversationId,
  });

  const watcher = await ConversationNotificationReceiver.open(temporal.client, root.conversationId, {
    taskQueue,
  });
  const [, mirror] = await receiveMany(watcher, 2);
  expect(mirror?.body).toEqual(interaction);
  expect(mirror?.conversationId).toBe(root.conversationId);

  // Resolving the mirror directly at the root is refused: the origin is authoritative.
  const atRoot = await errorOf(
    kitCall('resolve at root', () =>
      conversationHandle(temporal.client, root.conversationId).executeUpdate(resolveNotificationUpdate, {
        args: [
          {
            requestId: interaction.requestId,
            answer: { type: 'approval', approved: true },
          },
        ],
      }),
    ),
  );
  expect(atRoot.kind).toBe(ErrorKind.InvalidState);

  const resolution = await resolveNotification(temporal.client, mirror!, {
    type: 'approval',
    approved: true,
  });
  expect(resolution.conversationId).toBe(child.conversationId);

  // The mirror is settled: a new root receiver is not offered it again; it sees the record of the
  // answer (SPEC S5.10), then the next item.
  await watcher.dispose();
  await publishNotifications(temporal.client, root.conversationId, [{ body: messageBody('after') }], {
    taskQueue,
  });
  await using next = await ConversationNotificationReceiver.open(temporal.client, root.conversationId, {
    taskQueue,
  });
  const record = await next.recv();
  expect(record?.body).toMatchObject({ type: 'status', event: 'interaction-resolved' });
  expect(record?.body.type === 'status' && record.body.detail).toContain(`${interaction.requestId} approved`);
  expect(label(await next.recv())).toBe('after');
  expect(await conversationSummary(temporal.client, child.conversationId)).toMatchObject({
    pendingInteractions: 0,
  });
  expect(await conversationSummary(temporal.client, root.conversationId)).toMatchObject({
    pendingInteractions: 0,
  });
});

test('S5 across continue-as-new: backlog, lease, pending interactions and resolve idempotency carry over', async () => {
  const { conversationId, threadId } = conversation();
  const settings = { continueAsNewAfterEvents: 20, continueAsNewAfterUpdates: 3 };
  const interaction = approvalBody(threadId, 'carry me over');
  await publishNotifications(
    temporal.client,
    conversationId,
    [{ body: messageBody('m1') }, { body: interaction }, { body: messageBody('m2') }],
    { taskQueue, settings },
  );
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    settings,
  });
  const next = () => receiver.recv();
  const first = [(await next())!, (await next())!];
  expect(first.map(label)).toEqual(['m1', 'interaction']);
  const generationBefore = (await conversationSummary(temporal.client, conversationId)).generation;
  // Enough updates to force several continue-as-new while the lease is held and the interaction is pending.
  for (let index = 0; index < 4; index++) {
    await publishNotifications(temporal.client, conversationId, [{ body: messageBody(`later-${index}`) }], {
      taskQueue,
      settings,
    });
    expect(label(await next())).toBe(index === 0 ? 'm2' : `later-${index - 1}`);
  }
  // A run lives a second before it continues as new (test/workflows/continue-as-new-pace.test.ts).
  await eventually(
    () => conversationSummary(temporal.client, conversationId),
    (summary) => summary.generation > generationBefore,
    'a continue-as-new while the lease is held and the interaction pending',
  );
  const answer = { type: 'approval', approved: true } as const;
  const resolution = await resolveNotification(temporal.client, first[1]!, answer);
  expect(label(await next())).toBe('later-3');
  await publishNotifications(temporal.client, conversationId, [{ body: messageBody('after') }], {
    taskQueue,
    settings,
  });
  expect(label(await next())).toBe('after');
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary.generation).toBeGreaterThan(generationBefore);
  expect(summary).toMatchObject({ pendingInteractions: 0, resolvedInteractions: 1 });
  expect(summary.leaseHolder).not.toBeNull();
  // The lease survived: a second receiver is still refused; the resolution is still idempotent.
  expect(
    (
      await errorOf(
        ConversationNotificationReceiver.open(temporal.client, conversationId, { taskQueue, settings }),
      )
    ).kind,
  ).toBe(ErrorKind.Conflict);
  expect(await resolveNotification(temporal.client, first[1]!, answer)).toEqual(resolution);
  expect(
    (await errorOf(resolveNotification(temporal.client, first[1]!, { type: 'approval', approved: false })))
      .kind,
  ).toBe(ErrorKind.Conflict);
});
