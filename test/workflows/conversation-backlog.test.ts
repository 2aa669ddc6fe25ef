// SPEC S5.2 / S7.3: a receiver far behind. The backlog past a high-water mark is paged into page
// workflows, so every continue-as-new input stays bounded by bytes, and one receiver later gets it all.
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import {
  conversationSummary,
  publishNotifications,
  resolveNotification,
  type NotificationDraftInput,
} from '../../client/conversations';
import { publishSignal } from '../../domain/conversation-messages';
import type { NotificationBody } from '../../domain/schemas';
import { approvalBody, label, messageBody, newConversation, receiveMany } from '../helpers/conversations';
import { eventually } from '../helpers/runs';
import { runHistories } from '../helpers/scale';
import { suiteWorker, workflowBundlePath, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('conversation-backlog', (connected) => (temporal = connected));

/** The messages of an error and of its causes. */
function causeChain(error: unknown): string[] {
  const messages: string[] = [];
  for (let current = error, hops = 0; current instanceof Error && hops < 8; current = current.cause, hops++)
    messages.push(current.message);
  return messages;
}

/** The page workflows of a conversation, by visibility (eventually consistent). */
async function pageWorkflows(client: Client, conversationId: string) {
  const pages: { workflowId: string; status: string }[] = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowType = "conversationPageWorkflow" AND TaskQueue = "${taskQueue}"`,
  }))
    if (execution.workflowId.startsWith(`${conversationId}-page-`))
      pages.push({ workflowId: execution.workflowId, status: execution.status.name });
  return pages;
}

/** The size of each run's input (for a continued run: the continue-as-new input). */
async function runInputBytes(client: Client, workflowId: string): Promise<number[]> {
  const sizes: number[] = [];
  for (const run of await runHistories(client, workflowId)) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    sizes.push(input.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0));
  }
  return sizes;
}

test('S7.3: 3,000 unreceived notifications are paged out, every continue-as-new input stays small, and one receiver then gets them all in order', async () => {
  const { conversationId, threadId } = newConversation();
  started.push(conversationId);
  const total = 3_000;
  const settings = {
    continueAsNewAfterEvents: 60,
    backlogHighWaterBytes: 16 * 1024,
    pageBytes: 8 * 1024,
  };
  // Interactions early (held before paging starts), mid-way and late (published behind pages).
  const interactionAt = new Set([100, 1_500, 2_900]);
  const bodies: NotificationBody[] = Array.from({ length: total }, (_, index) =>
    interactionAt.has(index) ? approvalBody(threadId, `approve ${index}?`) : messageBody(String(index)),
  );
  const drafts: NotificationDraftInput[] = bodies.map((body) => ({ body }));
  const startedAt = performance.now();
  for (let first = 0; first < total; first += 250)
    await publishNotifications(temporal.client, conversationId, drafts.slice(first, first + 250), {
      taskQueue,
      settings,
    });
  const published = await eventually(
    () => conversationSummary(temporal.client, conversationId),
    // Pages are cut one at a time: wait until all but the last (partial) page's worth left.
    (summary) => summary.lastSeq === total && (summary.pages ?? 0) >= 40,
    `${total} notifications published and paged`,
  );
  process.stderr.write(`[measure] published: ${JSON.stringify(published)}\n`);
  expect(published.backlogSize).toBe(total);
  expect(published.pendingInteractions).toBe(3);
  expect(published.pages).toBeGreaterThanOrEqual(40);
  const pages = await eventually(
    () => pageWorkflows(temporal.client, conversationId),
    (found) => found.length >= published.pages!,
    'page workflows in visibility',
  );
  started.push(...pages.map((page) => page.workflowId));

  // The late interaction waits behind pages; it is resolvable before anyone receives it.
  const late = bodies[2_900]!;
  const resolution = await resolveNotification(
    temporal.client,
    { body: late },
    { type: 'approval', approved: true },
  );
  expect(resolution.seq).toBe(2_901);

  const receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
  });
  const received = await receiveMany(receiver, total - 1);
  await receiver.dispose();
  const elapsedMs = Math.round(performance.now() - startedAt);

  const expectedSeqs = Array.from({ length: total }, (_, index) => index + 1).filter((seq) => seq !== 2_901);
  expect(received.map((notification) => notification.seq)).toEqual(expectedSeqs);
  expect(received.map(label)).toEqual(
    expectedSeqs.map((seq) => (interactionAt.has(seq - 1) ? 'interaction' : String(seq - 1))),
  );
  // A query just after a continue-as-new can fail (no workflow task yet): eventually() retries it.
  // Four times on loaded machines the new run answered "Workflow task is not scheduled yet" for the
  // whole wait: runs kept busy by updates had continued within a second of their start, and Temporal had
  // pushed each successor's first task further back (185 s in the last; test/workflows/
  // continue-as-new-pace.test.ts). Runs now live that second first; the poke stays harmless.
  const after = await eventually(
    () =>
      conversationSummary(temporal.client, conversationId).catch(async (error: unknown) => {
        if (causeChain(error).some((message) => /not scheduled yet/.test(message)))
          await temporal.client.workflow.getHandle(conversationId).signal(publishSignal, null as never);
        throw error;
      }),
    () => true,
    'summary after receiving',
    60_000,
  ).catch(async (error: unknown) => {
    await describeStuckRun(temporal.client, conversationId);
    throw error;
  });
  expect(after).toMatchObject({ pages: 0, pagedItems: 0, pendingInteractions: 2 });
  // Every page was read back and finished: none is left holding items.
  const finished = await eventually(
    () => pageWorkflows(temporal.client, conversationId),
    (found) => found.length >= pages.length && found.every((page) => page.status === 'COMPLETED'),
    'every page workflow completed',
  );
  started.push(...finished.map((page) => page.workflowId));

  // Unpaged, the last inputs would carry the whole backlog (~155 bytes an item): far more than this.
  const inputs = await runInputBytes(temporal.client, conversationId);
  const backlogBytes = JSON.stringify(received).length;
  process.stderr.write(`[measure] run inputs (bytes): ${inputs.join(' ')}\n`);
  // ~96 KiB of it are the 2,000 remembered notification ids (for dropping re-published duplicates).
  const bound = 160 * 1024;
  expect(inputs.length).toBeGreaterThan(5);
  expect(Math.max(...inputs)).toBeLessThan(bound);
  expect(backlogBytes).toBeGreaterThan(2 * bound);
  process.stderr.write(
    `[measure] ${total} notifications (${Math.round(backlogBytes / 1024)} KiB) through ${finished.length} pages and ${inputs.length} runs in ${elapsedMs} ms; largest run input ${Math.round(Math.max(...inputs) / 1024)} KiB\n`,
  );
}, 600_000);

test('S7.4: histories of a paging conversation and of its page workflows replay without non-determinism', async () => {
  const { conversationId } = newConversation();
  started.push(conversationId);
  const settings = { continueAsNewAfterEvents: 100, backlogHighWaterBytes: 2 * 1024, pageBytes: 1024 };
  await publishNotifications(
    temporal.client,
    conversationId,
    Array.from({ length: 100 }, (_, index) => ({ body: messageBody(String(index)) })),
    { taskQueue, settings },
  );
  const receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
  });
  expect((await receiveMany(receiver, 100)).map(label)).toEqual(
    Array.from({ length: 100 }, (_, index) => String(index)),
  );
  await receiver.dispose();
  const pages = await eventually(
    () => pageWorkflows(temporal.client, conversationId),
    (found) => found.length > 0 && found.every((page) => page.status === 'COMPLETED'),
    'completed page workflows',
  );
  // Idle once everything is read: no page work left, no continue-as-new churn. A continue-as-new that
  // was due as the reads ended may still come (a run lives a second before it continues): the
  // generation is taken once it has held for longer than that.
  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
  let idle = await conversationSummary(temporal.client, conversationId);
  for (let tries = 0; tries < 10; tries++) {
    await pause(1_500);
    const now = await conversationSummary(temporal.client, conversationId);
    if (now.generation === idle.generation) break;
    idle = now;
  }
  await pause(3_000);
  expect((await conversationSummary(temporal.client, conversationId)).generation).toBe(idle.generation);
  const runs = await runHistories(temporal.client, conversationId);
  for (const { workflowId, runId } of [
    ...runs,
    ...pages.slice(0, 2).map((page) => ({ ...page, runId: undefined })),
  ]) {
    const history = await temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: workflowBundlePath() } },
      history,
      workflowId,
    );
  }
  process.stderr.write(
    `[measure] replayed ${runs.length} conversation runs and 2 of ${pages.length} pages\n`,
  );
}, 300_000);

/**
 * Writes what the server holds of a run whose queries keep answering "not scheduled yet" (seen three
 * times on loaded machines, not explained): its status, history length, pending task, the first-task
 * backoff of its start and its last events, for whoever reads the failed run's log.
 */
async function describeStuckRun(client: Client, workflowId: string): Promise<void> {
  try {
    const handle = client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    process.stderr.write(
      `[stuck run] ${JSON.stringify({
        runId: description.runId,
        status: description.status.name,
        historyLength: description.historyLength,
        pendingWorkflowTask: description.raw.pendingWorkflowTask ?? null,
        firstWorkflowTaskBackoff: started?.firstWorkflowTaskBackoff ?? null,
        continuedFrom: started?.continuedExecutionRunId ?? null,
        lastEvents: events.slice(-8).map((event) => event.eventType),
      })}\n`,
    );
  } catch (error) {
    process.stderr.write(`[stuck run] describe failed: ${String(error)}\n`);
  }
}
