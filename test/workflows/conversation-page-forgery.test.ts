// SPEC S3.9, S3.10: a conversation's page workflows hold its unread backlog, and the signals between
// them are proven like every other workflow-to-workflow signal. Before, anyone who could signal and
// list workflows (a page's id is in the namespace's workflow list) could ask a page that was not the
// oldest to deliver early: the conversation dropped it as out of turn, the page completed, its
// notifications were lost, and the conversation waited for that page for good — one signal wedged its
// receivers. A forged delivery of the oldest page replaced its notifications with the forger's. Each
// page now holds a token, in its input and in the conversation's reference to it; a request or a
// delivery without it changes nothing (patch `pageTokens`).
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { publishNotifications } from '../../client/conversations';
import type { JournalEntry } from '../../domain/conversation-pages';
import { label, messageBody, newConversation, receiveMany } from '../helpers/conversations';
import { failedTasks } from '../helpers/task-answers';
import { patchesOf } from '../helpers/histories';
import { eventually } from '../helpers/runs';
import { runHistories } from '../helpers/scale';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('page-forgery', (connected) => (temporal = connected));

/** The page workflows a conversation started, oldest first, from its runs' histories. */
async function pagesOf(conversationId: string): Promise<string[]> {
  const pages: string[] = [];
  for (const run of await runHistories(temporal.client, conversationId)) {
    const history = await temporal.client.workflow.getHandle(conversationId, run.runId).fetchHistory();
    for (const event of history.events ?? []) {
      const id = event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (id) pages.push(id);
    }
  }
  const firstSeq = (id: string) => Number(/-page-(\d+)-/.exec(id)?.[1]);
  return pages.sort((a, b) => firstSeq(a) - firstSeq(b));
}

/** A page workflow's entries, as its input holds them. */
async function entriesOf(pageId: string): Promise<JournalEntry[]> {
  const history = await temporal.client.workflow.getHandle(pageId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return (JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8')) as { entries: JournalEntry[] })
    .entries;
}

test('forged page requests and deliveries, by a client that lists the pages, lose and change nothing', async () => {
  const { conversationId } = newConversation();
  started.push(conversationId);
  const settings = { continueAsNewAfterEvents: 100, backlogHighWaterBytes: 2 * 1024, pageBytes: 1024 };
  const count = 120;
  await publishNotifications(
    temporal.client,
    conversationId,
    Array.from({ length: count }, (_, index) => ({ body: messageBody(String(index)) })),
    { taskQueue, settings },
  );
  const pages = await eventually(
    () => pagesOf(conversationId),
    (found) => found.length >= 3,
    'three pages cut',
  );
  const signal = (workflowId: string, name: string, payload: unknown) =>
    temporal.client.workflow.getHandle(workflowId).signal<[unknown]>(name, payload);
  // The oldest page's entries, with the forger's text: well-shaped, in the page's seqs.
  const real = await entriesOf(pages[0]!);
  const forged = real.map((entry) => ({
    ...entry,
    notification: { ...entry.notification, body: messageBody('forged') },
  }));
  for (const payload of [undefined, null, {}, { token: 'f'.repeat(32) }]) {
    await signal(pages[1]!, 'conversation-page-request', payload);
    await signal(pages[2]!, 'conversation-page-request', payload);
  }
  await signal(conversationId, 'conversation-page-delivered', { pageId: pages[0], entries: forged });
  await signal(conversationId, 'conversation-page-delivered', {
    pageId: pages[0],
    entries: forged,
    token: 'f'.repeat(32),
  });
  // Every page is still there, waiting to be asked.
  for (const page of pages)
    expect([page, (await temporal.client.workflow.getHandle(page).describe()).status.name]).toEqual([
      page,
      'RUNNING',
    ]);

  const receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
  });
  const giveUp = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('the receiver stalled: a page never came')), 60_000).unref(),
  );
  const received = await Promise.race([receiveMany(receiver, count), giveUp]);
  expect(received.map(label)).toEqual(Array.from({ length: count }, (_, index) => String(index)));
  await receiver.dispose();
  const history = await temporal.client.workflow.getHandle(conversationId).fetchHistory();
  expect(failedTasks(history.events ?? [])).toEqual([]);
  // The runs that cut pages took the patch.
  const taken: string[] = [];
  for (const run of await runHistories(temporal.client, conversationId)) {
    const events = (await temporal.client.workflow.getHandle(conversationId, run.runId).fetchHistory())
      .events;
    taken.push(...patchesOf(events ?? []));
  }
  expect(taken).toContain('pageTokens');
}, 120_000);
