/**
 * S7.3 at full size (issue 8, item 6): one run with 1,000 threads, one thread with 10,000 messages,
 * one conversation with 100,000 notifications, on its own dev server (SQLite file under .data/) and an
 * in-process worker, with the library's default continue-as-new settings. Prints durations, the largest
 * history per workflow type, the number of continue-as-new runs, and this process's RSS over time.
 *
 *   npx tsx scripts/scale.ts [--threads 1000] [--messages 10000] [--notifications 100000]
 *                            [--lead 2000] [--concurrency 8]
 *
 * A size of 0 skips that part. `--lead` is how far publishers may run ahead of the receiver.
 * `--backlog N` (off by default) probes the limit of a receiver that falls behind: N notifications are
 * published with nobody receiving, into a conversation that continues as new every 20 events; the
 * backlog past the high-water mark is paged into page workflows, so each continue-as-new input stays
 * small; then one receiver takes everything and the probe checks seqs and order.
 */
import { maxWaitingMessages } from '../domain/run-state';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createActivities } from '../activities';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import {
  historyEventBound,
  historyStats,
  manyMessages,
  manyMessagesInTurns,
  manyNotifications,
  manyThreads,
  runHistories,
  type RunHistory,
} from '../test/helpers/scale';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import { conversationSummary, publishNotifications } from '../client/conversations';
import { label, messageBody, newConversation } from '../test/helpers/conversations';
import { eventually } from '../test/helpers/runs';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import { createAgentWorker } from '../workers/create-worker';
import { startDevServer, defaultDataDir } from '../workers/dev-server';

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1000' },
    messages: { type: 'string', default: '10000' },
    notifications: { type: 'string', default: '100000' },
    lead: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    backlog: { type: 'string', default: '0' },
  },
});
const perTurn = 4_000;
const sizes = {
  threads: Number(values.threads),
  messages: Number(values.messages),
  notifications: Number(values.notifications),
};

/** RSS samples of this process (the worker, and the client driving it), every 3 s. */
const rss: number[] = [];
/** RSS samples of the dev server process, taken at the same moments (for context). */
const serverRss: number[] = [];
let serverPid: number | undefined;
const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
/** Workflows in the worker's cache right now (printed with every tenth sample). */
let cachedWorkflows: () => number | undefined = () => undefined;
const began = Date.now();
const sample = () => {
  rss.push(process.memoryUsage().rss);
  if (rss.length % 10 === 0)
    log(
      `  [${Math.round((Date.now() - began) / 1000)} s] worker RSS ${mib(rss.at(-1)!)} MiB, ${cachedWorkflows() ?? '?'} workflows cached`,
    );
  const kib = serverPid ? /VmRSS:\s+(\d+)/.exec(safeRead(`/proc/${serverPid}/status`))?.[1] : undefined;
  serverRss.push(kib ? Number(kib) * 1024 : 0);
};
const safeRead = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};
const sampler = setInterval(sample, 3000);
const log = (line: string) => console.log(line);

function reportMemory(label: string, from: number): void {
  for (const [who, all] of [
    ['worker process', rss],
    ['dev server', serverRss],
  ] as const) {
    const samples = all.slice(from);
    if (samples.length === 0) return log(`  RSS (${label}): no sample`);
    log(
      `  RSS of the ${who} (${label}, ${samples.length} samples every 3 s): first ${mib(samples[0]!)} MiB, last ${mib(samples.at(-1)!)} MiB, min ${mib(Math.min(...samples))} MiB, max ${mib(Math.max(...samples))} MiB`,
    );
  }
}

function reportHistories(histories: readonly RunHistory[]): boolean {
  for (const stats of historyStats(histories))
    log(
      `  ${stats.workflowType}: ${stats.runs} runs inspected, ${stats.continuedAsNew} continued as new, largest history ${stats.largestEvents} events`,
    );
  const over = histories.filter((run) => run.events >= historyEventBound);
  for (const run of over)
    log(`  OVER BOUND: ${run.workflowType} ${run.workflowId}/${run.runId}: ${run.events} events`);
  return over.length === 0;
}

function check(what: string, ok: boolean): boolean {
  log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  return ok;
}

async function main(): Promise<void> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already
  }
  const runDir = join(defaultDataDir(), `scale-${Date.now()}`);
  mkdirSync(runDir, { recursive: true });
  log(`dev server on ${join(runDir, 'temporal.sqlite')}`);
  const server = await startDevServer({
    dbFile: join(runDir, 'temporal.sqlite'),
    headless: true,
    searchAttributes: searchAttributeRegistrations,
  });
  serverPid = server.pid;
  // Histories that carry page workflows' inputs can pass gRPC's default 4 MiB message size.
  const connection = await Connection.connect({
    address: server.address,
    channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
    interceptors: [grpcRetryInterceptor()],
  });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection });
  const taskQueue = `scale-${randomUUID().slice(0, 8)}`;
  const worker = await createAgentWorker({
    connection: nativeConnection,
    taskQueue,
    activities: createActivities(),
  });
  const running = worker.run();
  cachedWorkflows = () => worker.getStatus().numCachedWorkflows;
  sample();
  const concurrency = Number(values.concurrency);
  let allOk = true;
  try {
    if (sizes.threads > 0) {
      log(`\n== ${sizes.threads} threads in one run (default settings)`);
      const from = rss.length;
      const outcome = await manyThreads({
        client,
        taskQueue,
        threads: sizes.threads,
        sample: 5,
        concurrency,
        log,
      });
      const subAgents = outcome.listed.filter((thread) => thread.id !== outcome.rootThreadId);
      allOk =
        check(
          `counters live ${outcome.counters.live} total ${outcome.counters.total}`,
          outcome.counters.live === sizes.threads && outcome.counters.total === sizes.threads,
        ) && allOk;
      allOk =
        check(
          `${subAgents.length} sub-agents listed, all idle after one turn`,
          subAgents.length === sizes.threads &&
            subAgents.every((thread) => thread.status === 'idle' && thread.turnsCompleted === 1),
        ) && allOk;
      allOk =
        check(
          `shutdown: ${outcome.shutdown.cancelled.length} cancelled, ${outcome.shutdown.failed.length} failed, ${outcome.shutdown.unconfirmed.length} unconfirmed`,
          outcome.shutdown.cancelled.length === sizes.threads &&
            outcome.shutdown.failed.length + outcome.shutdown.unconfirmed.length === 0,
        ) && allOk;
      log(`  durations (s): ${JSON.stringify(outcome.durations)}`);
      allOk = reportHistories(outcome.histories) && allOk;
      reportMemory('threads', from);
    }
    if (sizes.messages > maxWaitingMessages) {
      // More than may wait for one turn (back-pressure): the thread takes them over several turns.
      log(`\n== ${sizes.messages} messages to one thread over turns of ${perTurn} (default settings)`);
      const from = rss.length;
      const outcome = await manyMessagesInTurns({
        client,
        taskQueue,
        messages: sizes.messages,
        perTurn,
        concurrency,
        log,
      });
      const consumed = outcome.turnResults.flatMap((result) => result.split('\n'));
      allOk =
        check(
          `every one of ${outcome.sent.length} messages consumed once, in seq order, over ${outcome.turnResults.length} turns`,
          consumed.length === outcome.sent.length &&
            consumed.every((content, index) => content === outcome.sent[index]),
        ) && allOk;
      allOk =
        check(
          `counters live ${outcome.counters.live} total ${outcome.counters.total}`,
          outcome.counters.total === 1,
        ) && allOk;
      log(`  durations (s): ${JSON.stringify(outcome.durations)}`);
      allOk = reportHistories(outcome.histories) && allOk;
      reportMemory('messages', from);
    } else if (sizes.messages > 0) {
      log(`\n== ${sizes.messages} messages to one thread, then one triggered turn (default settings)`);
      const from = rss.length;
      const outcome = await manyMessages({ client, taskQueue, messages: sizes.messages, concurrency, log });
      if (outcome.before) {
        const { received } = outcome.before;
        allOk =
          check(
            `mailbox before the turn: ${received.length} waiting, seqs 1..n, contents as sent`,
            received.length === sizes.messages &&
              received.every(
                (message, index) => message.seq === index + 1 && message.content === outcome.sent[index],
              ),
          ) && allOk;
      } else log('  (mailbox query skipped: its answer would exceed the 2 MiB blob limit)');
      const consumed = outcome.after.received.map((message) => message.seq);
      allOk =
        check(
          `mailbox after the turn: nothing waiting, the last ${consumed.length} consumed in turn 2 ending at seq ${consumed.at(-1)}`,
          outcome.after.received.every((message) => message.consumedInTurn === 2) &&
            consumed.at(-1) === sizes.messages + 1 &&
            consumed.every((seq, index) => index === 0 || seq === consumed[index - 1]! + 1),
        ) && allOk;
      allOk =
        check(
          'the triggered turn consumed every message once, in order',
          outcome.thread.latestTurn?.result === outcome.sent.join('\n'),
        ) && allOk;
      allOk =
        check(
          `counters live ${outcome.counters.live} total ${outcome.counters.total}`,
          outcome.counters.live === 1 && outcome.counters.total === 1,
        ) && allOk;
      log(`  durations (s): ${JSON.stringify(outcome.durations)}`);
      allOk = reportHistories(outcome.histories) && allOk;
      reportMemory('messages', from);
    }
    if (sizes.notifications > 0) {
      log(
        `\n== ${sizes.notifications} notifications through one conversation (default settings, lead ${values.lead})`,
      );
      const from = rss.length;
      const outcome = await manyNotifications({
        client,
        taskQueue,
        notifications: sizes.notifications,
        lead: Number(values.lead),
        log,
      });
      allOk =
        check(
          `received ${outcome.received.length}, seqs 1..n and texts 0..n-1 in order, lastSeq ${outcome.lastSeq}`,
          outcome.received.every((notification, index) => notification.seq === index + 1) &&
            outcome.labels.every((text, index) => text === String(index)) &&
            outcome.lastSeq === sizes.notifications,
        ) && allOk;
      log(`  durations (s): ${JSON.stringify(outcome.durations)} (${outcome.generation + 1} runs)`);
      allOk = reportHistories(outcome.histories) && allOk;
      reportMemory('notifications', from);
    }
    if (Number(values.backlog) > 0)
      allOk = (await backlogProbe(client, taskQueue, Number(values.backlog))) && allOk;
  } finally {
    clearInterval(sampler);
    reportMemory('whole script', 0);
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
    await server.stop();
  }
  log(allOk ? '\nall checks passed' : '\nSOME CHECKS FAILED');
  process.exitCode = allOk ? 0 : 1;
}

/**
 * Publishes `count` notifications, 1,000 per signal, with no receiver, into a conversation that
 * continues as new every 20 events (default paging settings); checks it is still running with every item
 * counted, that each run's input stayed small, then receives everything and checks seqs and order.
 */
async function backlogProbe(client: Client, taskQueue: string, count: number): Promise<boolean> {
  log(`\n== backlog probe: ${count} notifications, nobody receiving, continue-as-new every 20 events`);
  const { conversationId } = newConversation();
  const settings = { continueAsNewAfterEvents: 20 };
  const startedAt = performance.now();
  for (let first = 0; first < count; first += 1000) {
    const texts = Array.from({ length: Math.min(1000, count - first) }, (_, index) => String(first + index));
    await publishNotifications(
      client,
      conversationId,
      texts.map((text) => ({ body: messageBody(text) })),
      { taskQueue, settings },
    );
  }
  const publishS = seconds(startedAt);
  const handle = client.workflow.getHandle(conversationId);
  await new Promise((done) => setTimeout(done, 10_000));
  const description = await handle.describe();
  log(
    `  status 10 s after publishing (${publishS} s): ${description.status.name} (run ${description.runId})`,
  );
  let ok = check('the conversation is running', description.status.name === 'RUNNING');
  const summary = await eventually(
    () => conversationSummary(client, conversationId),
    (found) => found.lastSeq === count,
    `${count} notifications published`,
  );
  log(`  summary: ${JSON.stringify(summary)}`);
  ok =
    check(
      `backlog ${summary.backlogSize} of ${count}, ${summary.pages} pages`,
      summary.backlogSize === count,
    ) && ok;
  const inputs = await runInputs(client, conversationId);
  const largest = Math.max(...inputs.map((run) => run.inputBytes));
  const failures = [...new Set(inputs.flatMap((run) => run.failures))];
  log(
    `  ${inputs.length} runs; continue-as-new input: largest ${Math.round(largest / 1024)} KiB, median ${Math.round(median(inputs.map((run) => run.inputBytes)) / 1024)} KiB`,
  );
  if (failures.length > 0) log(`  failures: ${JSON.stringify(failures).slice(0, 600)}`);
  ok =
    check(
      'every run input under 1 MiB, no failed workflow task',
      largest < 1024 * 1024 && failures.length === 0,
    ) && ok;

  const receivingAt = performance.now();
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, { taskQueue });
  const received: number[] = [];
  const labels: string[] = [];
  while (received.length < count) {
    const notification = await receiver.recv();
    if (notification === null) break;
    received.push(notification.seq);
    labels.push(label(notification));
  }
  await receiver.dispose();
  log(`  received ${received.length} in ${seconds(receivingAt)} s`);
  ok =
    check(
      `received ${received.length}: seqs 1..${count} and texts 0..${count - 1} in order`,
      received.length === count &&
        received.every((seq, index) => seq === index + 1) &&
        labels.every((text, index) => text === String(index)),
    ) && ok;
  const after = await eventually(
    () => conversationSummary(client, conversationId),
    () => true,
    'summary after receiving',
  );
  log(`  after: ${after.generation + 1} runs, ${after.pages} pages left, backlog ${after.backlogSize}`);
  await handle.terminate('backlog probe done').catch(() => undefined);
  return ok;
}

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;
const median = (values: number[]) => [...values].sort((left, right) => left - right)[values.length >> 1] ?? 0;

/** Each run's input size and the failures recorded in its history. */
async function runInputs(client: Client, workflowId: string) {
  const inputs: { runId: string; inputBytes: number; failures: string[] }[] = [];
  for (const run of await runHistories(client, workflowId)) {
    const events = (await client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events ?? [];
    const payloads = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    const failures = events
      .map(
        (event) =>
          event.workflowTaskFailedEventAttributes?.failure?.message ??
          event.workflowExecutionFailedEventAttributes?.failure?.message,
      )
      .filter((message): message is string => Boolean(message));
    inputs.push({
      runId: run.runId,
      inputBytes: payloads.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0),
      failures,
    });
  }
  return inputs;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
