// SPEC S7.3: a workflow that continues as new quickly, run after run, must not stall. Temporal holds a
// new run's first workflow task back until its predecessor has lived a minimal interval (1 s) counted
// from its execution time, and an update starts a run's task before that time anyway: runs that an update
// stream kept going and that continued within a second pushed each successor's backoff a little further,
// until a conversation that then got only signals sat for minutes without a workflow task ("Workflow task
// is not scheduled yet", seen with a 185 s backoff in CI). Every long-lived workflow now lives that
// interval from its execution time before it continues as new.
import type { Client } from '@temporalio/client';
import {
  conversationSummary,
  publishNotifications,
  publishNotificationsWithReceipt,
} from '../../client/conversations';
import { messageBody, newConversation } from '../helpers/conversations';
import { mailboxQuery } from '../../domain/messages';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { runHistories } from '../helpers/scale';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';
import { failedTasks } from '../helpers/task-answers';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('can-pace', (connected) => (temporal = connected));

/** Each run's first workflow task backoff, in ms, oldest run first. */
async function backoffsOf(client: Client, workflowId: string): Promise<number[]> {
  const backoffs: number[] = [];
  for (const run of await runHistories(client, workflowId)) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const backoff = history.events?.[0]?.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff;
    backoffs.push(Number(backoff?.seconds ?? 0) * 1000 + Math.round((backoff?.nanos ?? 0) / 1e6));
  }
  return backoffs;
}

test('a conversation continuing as new after every update, then taking only signals, is never held back', async () => {
  const { conversationId } = newConversation();
  started.push(conversationId);
  const options = { taskQueue, settings: { continueAsNewAfterUpdates: 1 } };
  // Updates back to back until the conversation has had five runs (each continues after its first update).
  let updates = 0;
  while ((await runHistories(temporal.client, conversationId).catch(() => [])).length < 5 && updates < 400) {
    await publishNotificationsWithReceipt(
      temporal.client,
      conversationId,
      [{ body: messageBody(`by update ${updates}`) }],
      options,
    );
    updates += 1;
  }
  // Now only a signal: the newest run must take it without waiting out a grown backoff.
  await publishNotifications(temporal.client, conversationId, [{ body: messageBody('by signal') }], options);
  const summary = await eventually(
    () => conversationSummary(temporal.client, conversationId),
    (found) => found.lastSeq === updates + 1,
    'the signalled notification published',
    30_000,
  );
  expect(summary.lastSeq).toBe(updates + 1);
  const backoffs = await backoffsOf(temporal.client, conversationId);
  expect(backoffs.length).toBeGreaterThanOrEqual(5);
  // Without the pacing each backoff was about a second longer than the one before (3.6 s by the fifth).
  expect(backoffs.filter((backoff) => backoff > 1_000)).toEqual([]);
}, 120_000);

test('an agent kept busy by messages continues as new with no backoff, and its mailbox stays exact', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const thread = await root.spawn({
    task: 'collect',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'ready' }]] },
  });
  await untilTurns(service, thread.id, 1);
  // Four messages at a time until the agent has had four runs.
  let sent = 0;
  while ((await runHistories(temporal.client, thread.id)).length < 4 && sent < 2_000) {
    await Promise.all(
      [0, 1, 2, 3].map((offset) => root.sendMessage({ recipient: thread.id, content: `m${sent + offset}` })),
    );
    sent += 4;
  }
  const view = await eventually(
    () => temporal.client.workflow.getHandle(thread.id).query(mailboxQuery),
    (found) => found.received.length === sent,
    `${sent} messages in the mailbox`,
    30_000,
  );
  expect(view.received.map((message) => message.seq)).toEqual(Array.from({ length: sent }, (_, n) => n + 1));
  expect((await backoffsOf(temporal.client, thread.id)).filter((backoff) => backoff > 1_000)).toEqual([]);
  await service.shutdown();
}, 120_000);

test('a cancel request while a run waits out its pacing timer ends it, without a failed task', async () => {
  // Due after its first update and younger than the pacing interval: its timer runs when the request
  // comes, and the timer's cancellation once failed the task (an unhandled rejection) until it fired.
  const { conversationId } = newConversation();
  started.push(conversationId);
  const options = { taskQueue, settings: { continueAsNewAfterUpdates: 1 } };
  await publishNotificationsWithReceipt(
    temporal.client,
    conversationId,
    [{ body: messageBody('one') }],
    options,
  );
  const handle = temporal.client.workflow.getHandle(conversationId);
  await handle.cancel();
  const status = await eventually(
    async () => (await handle.describe()).status.name,
    (name) => name !== 'RUNNING',
    'the conversation to end',
  );
  expect(status).toBe('CANCELLED');
  expect(failedTasks((await handle.fetchHistory()).events ?? [])).toEqual([]);
}, 60_000);
