import type { Client } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary, publishNotifications } from '../../client/conversations';
import type { ThreadService } from '../../client/thread-service';
import type { ShutdownReport } from '../../domain/control';
import { mailboxQuery, type MailboxView } from '../../domain/messages';
import type { AgentThread, ConversationNotification } from '../../domain/schemas';
import type { ConversationWorkflowInput } from '../../workflows/conversation-workflow';
import { label, messageBody, newConversation } from './conversations';
import { attachRun, untilTurns, eventually } from './runs';

/**
 * The three S7.3 scale scenarios (issue 8, item 6), shared by the reduced test
 * (`test/workflows/scale.test.ts`) and the full-size script (`scripts/scale.ts`). Each returns what it
 * observed; callers assert on it (the test) or print it (the script).
 */

/** Temporal warns at 10,240 events per run (and fails at 51,200): every run must stay under this. */
export const historyEventBound = 10_240;

/** One run of one workflow id and the length of its history. */
export interface RunHistory {
  workflowId: string;
  runId: string;
  workflowType: string;
  status: string;
  events: number;
}

/**
 * Every run of a workflow id with its history length. Visibility is eventually consistent: it is read
 * until it lists `minRuns` runs and the current run.
 */
export async function runHistories(client: Client, workflowId: string, minRuns = 1): Promise<RunHistory[]> {
  const current = (await client.workflow.getHandle(workflowId).describe()).runId;
  const runs = await eventually(
    async () => {
      const found: { runId: string; type: string; status: string }[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
        found.push({ runId: execution.runId, type: execution.type, status: execution.status.name });
      return found;
    },
    (found) => found.length >= minRuns && found.some((run) => run.runId === current),
    `${minRuns} run(s) of ${workflowId} in visibility`,
  );
  const histories: RunHistory[] = [];
  for (const run of runs) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    histories.push({
      workflowId,
      runId: run.runId,
      workflowType: run.type,
      status: run.status,
      events: history.events?.length ?? 0,
    });
  }
  return histories;
}

/** Per workflow type: runs, runs that continued as new, the largest history. */
export interface HistoryStats {
  workflowType: string;
  runs: number;
  continuedAsNew: number;
  largestEvents: number;
}

export function historyStats(histories: readonly RunHistory[]): HistoryStats[] {
  const byType = new Map<string, HistoryStats>();
  for (const run of histories) {
    const stats = byType.get(run.workflowType) ?? {
      workflowType: run.workflowType,
      runs: 0,
      continuedAsNew: 0,
      largestEvents: 0,
    };
    stats.runs++;
    if (run.status === 'CONTINUED_AS_NEW') stats.continuedAsNew++;
    stats.largestEvents = Math.max(stats.largestEvents, run.events);
    byType.set(run.workflowType, stats);
  }
  return [...byType.values()];
}

/** Runs `count` tasks, at most `concurrency` at a time; results in index order. */
export async function pool<Result>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array<Result>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let index = next++; index < count; index = next++) results[index] = await task(index);
    }),
  );
  return results;
}

const seconds = (since: number): number => Math.round((performance.now() - since) / 100) / 10;

/** Options common to the root-run scenarios. */
export interface RunScenarioOptions {
  client: Client;
  taskQueue: string;
  /** Root and agents' continue-as-new threshold; the library default (4,000) when omitted. */
  continueAsNewAfterEvents?: number;
  /** Client calls in flight at once. */
  concurrency?: number;
  log?: (line: string) => void;
}

export interface ThreadsOutcome {
  rootThreadId: string;
  threads: AgentThread[];
  /** Counters right after the last spawn, and the listing once every sub-agent was idle. */
  counters: { live: number; total: number };
  listed: AgentThread[];
  shutdown: ShutdownReport;
  histories: RunHistory[];
  durations: { spawnS: number; idleS: number; shutdownS: number; totalS: number };
}

/**
 * One root run with `threads` sub-agents, spawned by the client as root; each replies once and idles.
 * Histories: every run of the root, plus every run of `sample` evenly spaced sub-agents.
 */
export async function manyThreads(
  options: RunScenarioOptions & { threads: number; sample?: number },
): Promise<ThreadsOutcome> {
  const { client, taskQueue, threads: count } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const service = await attachRun(client, taskQueue, {
    ...(options.continueAsNewAfterEvents
      ? { continueAsNewAfterEvents: options.continueAsNewAfterEvents }
      : {}),
    grant: { owner: 'tests', maxConcurrent: count, maxTotal: count },
  });
  const root = service.rootControls();
  const threads = await pool(count, options.concurrency ?? 8, async (index) => {
    const thread = await root.spawn({
      task: `idle worker ${index}`,
      name: `w${index}`,
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: `ready ${index}` }]] },
    });
    if ((index + 1) % 100 === 0) log(`  spawned ${index + 1}/${count} (${seconds(started)} s)`);
    return thread;
  });
  const spawnS = seconds(started);
  const counters = await service.counters();
  const listed = await eventually(
    () => root.listThreads(),
    (all) =>
      all.filter((thread) => thread.id !== service.rootThreadId && thread.status === 'idle').length >= count,
    `${count} idle sub-agents`,
    600_000,
  );
  const idleS = seconds(started);
  const shutdownStarted = performance.now();
  const shutdown = await service.shutdown();
  const shutdownS = seconds(shutdownStarted);
  const sample = options.sample ?? 5;
  const sampled = Array.from(
    { length: Math.min(sample, count) },
    (_, index) => threads[Math.floor((index * (count - 1)) / Math.max(1, sample - 1))]!,
  );
  const histories: RunHistory[] = [];
  for (const id of [service.rootThreadId, ...new Set(sampled.map((thread) => thread.id))])
    histories.push(...(await runHistories(client, id)));
  return {
    rootThreadId: service.rootThreadId,
    threads,
    counters,
    listed,
    shutdown,
    histories,
    durations: { spawnS, idleS, shutdownS, totalS: seconds(started) },
  };
}

/**
 * The mailbox query answers every waiting message (~250 bytes each): past ~7,500 the answer exceeds
 * Temporal's 2 MiB blob limit ("Blob data size exceeds limit"), so larger runs check the turn's result.
 */
export const mailboxQueryLimit = 5_000;

export interface MessagesOutcome {
  rootThreadId: string;
  threadId: string;
  /** The content sent with each seq (index 0 = seq 1). */
  sent: string[];
  /**
   * The mailbox before the triggered turn (every message waiting), read only up to
   * {@link mailboxQueryLimit} messages; and after it.
   */
  before?: MailboxView | undefined;
  after: MailboxView;
  /** The thread after the triggered turn; its result lists the inbox it consumed, in order. */
  thread: AgentThread;
  counters: { live: number; total: number };
  shutdown: ShutdownReport;
  histories: RunHistory[];
  durations: { sendS: number; deliveredS: number; turnS: number; totalS: number };
}

/**
 * One thread receives `messages` messages from the root (no triggerTurn), then one triggered turn
 * consumes them all; the turn's result is its inbox, one content per line.
 */
export async function manyMessages(
  options: RunScenarioOptions & { messages: number },
): Promise<MessagesOutcome> {
  const { client, taskQueue, messages: count } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const service: ThreadService = await attachRun(client, taskQueue, {
    ...(options.continueAsNewAfterEvents
      ? { continueAsNewAfterEvents: options.continueAsNewAfterEvents }
      : {}),
  });
  const root = service.rootControls();
  const thread = await root.spawn({
    task: 'collect messages',
    name: 'collector',
    kernel: {
      type: 'scripted',
      turns: [[{ type: 'reply', text: 'ready' }], [{ type: 'reply', text: '{{inbox}}' }]],
    },
  });
  // Messages sent before its first turn starts would be that turn's inbox; this scenario wants them waiting.
  await untilTurns(service, thread.id, 1);
  const sent: string[] = new Array<string>(count + 1);
  const sendStarted = performance.now();
  await pool(count, options.concurrency ?? 8, async (index) => {
    const content = `m${index}`;
    const message = await root.sendMessage({ recipient: thread.id, content });
    sent[message.seq - 1] = content;
    if ((index + 1) % 1000 === 0) log(`  sent ${index + 1}/${count} (${seconds(sendStarted)} s)`);
  });
  const sendS = seconds(sendStarted);
  const handle = client.workflow.getHandle(thread.id);
  const before =
    count <= mailboxQueryLimit
      ? await eventually(
          () => handle.query(mailboxQuery),
          (view) => view.received.length >= count,
          `${count} deliveries`,
          600_000,
        )
      : undefined;
  const deliveredS = seconds(started);
  const trigger = await root.sendMessage({ recipient: thread.id, content: 'go', triggerTurn: true });
  sent[trigger.seq - 1] = 'go';
  const turnStarted = performance.now();
  const after = await eventually(
    async () => (await root.loadThread(thread.id))!,
    (current) => current.turnsCompleted >= 2 && current.status === 'idle',
    'the triggered turn',
    600_000,
  );
  const turnS = seconds(turnStarted);
  const afterView = await handle.query(mailboxQuery);
  const counters = await service.counters();
  const shutdown = await service.shutdown();
  const histories = [
    ...(await runHistories(client, service.rootThreadId)),
    ...(await runHistories(client, thread.id)),
  ];
  return {
    rootThreadId: service.rootThreadId,
    threadId: thread.id,
    sent,
    before,
    after: afterView,
    thread: after,
    counters,
    shutdown,
    histories,
    durations: { sendS, deliveredS, turnS, totalS: seconds(started) },
  };
}

export interface NotificationsOutcome {
  conversationId: string;
  received: ConversationNotification[];
  /** The texts received, in order (`'0'` … `String(n - 1)`), checked by the caller. */
  labels: string[];
  lastSeq: number;
  generation: number;
  histories: RunHistory[];
  durations: { totalS: number };
}

/**
 * One conversation receives `notifications` message notifications, published in signal batches of up
 * to 1,000 while one receiver consumes them; publishers stay at most `lead` items ahead, because the
 * unreceived backlog travels in the continue-as-new snapshot (see RELIABILITY.md, Scale).
 */
export async function manyNotifications(options: {
  client: Client;
  taskQueue: string;
  notifications: number;
  settings?: Omit<ConversationWorkflowInput, 'conversationId' | 'snapshot' | 'generation'>;
  lead?: number;
  log?: (line: string) => void;
}): Promise<NotificationsOutcome> {
  const { client, taskQueue, notifications: total } = options;
  const log = options.log ?? (() => undefined);
  const lead = options.lead ?? 2000;
  const { conversationId } = newConversation();
  const settings = options.settings ? { settings: options.settings } : {};
  const started = performance.now();
  await publishNotifications(client, conversationId, [{ body: messageBody('0') }], {
    taskQueue,
    ...settings,
  });
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, {
    taskQueue,
    ...settings,
  });
  const received: ConversationNotification[] = [];
  let publishError: unknown;
  const publishing = (async () => {
    for (let first = 1; first < total; first += 1000) {
      while (first - received.length > lead) await delay(20);
      const texts = Array.from({ length: Math.min(1000, total - first) }, (_, index) =>
        String(first + index),
      );
      await publishNotifications(
        client,
        conversationId,
        texts.map((text) => ({ body: messageBody(text) })),
        { taskQueue },
      );
    }
  })().catch((error: unknown) => {
    publishError = error;
  });
  try {
    while (received.length < total) {
      const notification = await receiver.recv();
      if (notification === null) throw new Error(`end-of-stream after ${received.length}`);
      received.push(notification);
      if (received.length % 10_000 === 0)
        log(`  received ${received.length}/${total} (${seconds(started)} s)`);
      if (publishError) throw publishError;
    }
    await publishing;
  } finally {
    await receiver.dispose();
  }
  const totalS = seconds(started);
  const summary = await conversationSummary(client, conversationId);
  const histories = await runHistories(client, conversationId, summary.generation + 1);
  await client.workflow.getHandle(conversationId).terminate('scale scenario done');
  return {
    conversationId,
    received,
    labels: received.map(label),
    lastSeq: summary.lastSeq,
    generation: summary.generation,
    histories,
    durations: { totalS },
  };
}

export interface TurnsOutcome {
  threadId: string;
  /** Each consuming turn's result: the contents it took, in order. */
  turnResults: string[];
  sent: string[];
  counters: { live: number; total: number };
  histories: RunHistory[];
  durations: { totalS: number };
}

/**
 * One thread receives `messages` messages from the root over its life: `perTurn` wait at a time
 * (below the mailbox back-pressure bound), then a triggered turn takes them; every turn's result lists
 * what it consumed, so the caller can check each message was consumed once, in order.
 */
export async function manyMessagesInTurns(
  options: RunScenarioOptions & { messages: number; perTurn: number },
): Promise<TurnsOutcome> {
  const { client, taskQueue, messages: count, perTurn } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const service = await attachRun(client, taskQueue);
  const root = service.rootControls();
  const thread = await root.spawn({
    task: 'collect messages',
    name: 'collector',
    kernel: {
      type: 'scripted',
      turns: [[{ type: 'reply', text: 'ready' }], [{ type: 'reply', text: '{{inbox}}' }]],
    },
  });
  await untilTurns(service, thread.id, 1);
  const sent: string[] = [];
  const turnResults: string[] = [];
  for (let from = 0; from < count; from += perTurn) {
    const chunk = Math.min(perTurn, count - from);
    const contents = await pool(chunk, options.concurrency ?? 8, async (offset) => {
      const content = `m${from + offset}`;
      const message = await root.sendMessage({ recipient: thread.id, content });
      return { seq: message.seq, content };
    });
    const trigger = await root.sendMessage({ recipient: thread.id, content: `go${from}`, triggerTurn: true });
    for (const { seq, content } of [...contents, { seq: trigger.seq, content: `go${from}` }])
      sent[seq - 1] = content;
    const turn = turnResults.length + 2;
    const done = await untilTurns(service, thread.id, turn);
    turnResults.push(done.latestTurn?.result ?? '');
    log(`  sent ${from + chunk}/${count}, turn ${turn} consumed ${chunk + 1} (${seconds(started)} s)`);
  }
  const counters = await service.counters();
  await service.shutdown();
  const histories = [
    ...(await runHistories(client, service.rootThreadId)),
    ...(await runHistories(client, thread.id)),
  ];
  return {
    threadId: thread.id,
    turnResults,
    sent,
    counters,
    histories,
    durations: { totalS: seconds(started) },
  };
}
