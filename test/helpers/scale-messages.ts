import type { ThreadControls } from '../../client/thread-controls';
import type { ThreadService } from '../../client/thread-service';
import type { ShutdownReport } from '../../domain/control';
import { mailboxQuery, type MailboxView } from '../../domain/messages';
import type { AgentThread } from '../../domain/schemas';
import { type RunHistory, runHistoriesOf } from './run-histories';
import { attachRun, eventually, untilTurns } from './runs';
import { attachScenarioRun, pool, type RunScenarioOptions, seconds } from './scale-scenario';

/**
 * Spawns the thread the message scenarios send to, and waits for its first turn: messages sent before
 * that turn starts would be its inbox, and these scenarios want them waiting. Its second turn replies
 * with its inbox, one content per line.
 */
async function collector(service: ThreadService, root: ThreadControls): Promise<AgentThread> {
  const thread = await root.spawn({
    task: 'collect messages',
    name: 'collector',
    kernel: {
      type: 'scripted',
      turns: [[{ type: 'reply', text: 'ready' }], [{ type: 'reply', text: '{{inbox}}' }]],
    },
  });
  await untilTurns(service, thread.id, 1);
  return thread;
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
  const { client, messages: count } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const service: ThreadService = await attachScenarioRun(options);
  const root = service.rootControls();
  const thread = await collector(service, root);
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
  const histories = await runHistoriesOf(client, [service.rootThreadId, thread.id]);
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
  const thread = await collector(service, root);
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
  const histories = await runHistoriesOf(client, [service.rootThreadId, thread.id]);
  return {
    threadId: thread.id,
    turnResults,
    sent,
    counters,
    histories,
    durations: { totalS: seconds(started) },
  };
}
