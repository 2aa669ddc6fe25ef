// A busy root run for the crash and restart tests (SPEC S7.1, S7.2): a tree of threads exchanging
// messages with triggered turns, conversations publishing, an interaction answered, while faults are
// injected at seeded random moments. Every client operation and observation goes into the log that
// test/helpers/checker.ts reads.
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { resolveNotification } from '../../client/conversations';
import { ThreadService } from '../../client/thread-service';
import { ErrorKind, KitError } from '../../domain/errors';
import { newId, relatedId } from '../../domain/ids';
import { mailboxQuery } from '../../domain/messages';
import type { AgentThread, SpawnRequestInput } from '../../domain/schemas';
import { seededRandom } from '../../bench/stats';
import type { LogEntry } from './checker';
import { eventually } from './runs';

/** The same seed gives the same fault moments. */
export { seededRandom };

export interface BusyRunOptions {
  client: Client;
  taskQueue: string;
  seed: number;
  /** Messages the root sends (alternating between two children, every fifth one triggers a turn). */
  messages: number;
  /** How many faults to inject while the run is busy. */
  faults: number;
  /** Injects one fault (kill and restart a worker, restart the server) and resolves when it has recovered. */
  fault: (index: number, rootThreadId: string) => Promise<void>;
  /** Called once everything is quiet, before the final observations, to let the caller ensure a worker runs. */
  settle?: () => Promise<void>;
  /**
   * Also spawn a model-kernel thread whose first turn calls the `word_count` tool activity: one before
   * the faults and one after them. Their first answers come back in {@link BusyRunResult.counted}.
   */
  counters?: boolean;
}

export interface BusyRunResult {
  log: LogEntry[];
  rootThreadId: string;
  durationMs: number;
  /** With `counters`: each counter thread's first answer, the one spawned before the faults first. */
  counted: { name: string; answer: string }[];
}

/** Runs the busy scenario and returns its log (the caller checks it with checkRun). */
export async function runBusyRun(options: BusyRunOptions): Promise<BusyRunResult> {
  const { client, taskQueue } = options;
  const random = seededRandom(options.seed);
  const log: LogEntry[] = [];
  const started = Date.now();
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: {
      task: 'coordinate the crash test',
      name: 'root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'root ready' }]] },
    },
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxTotal: 10, maxConcurrent: 10 },
    continueAsNewAfterEvents: 200,
    shutdownGraceMs: 30_000,
  });
  const root = service.rootControls();
  const spawnLogged = async (request: SpawnRequestInput): Promise<AgentThread> => {
    const thread = await retrying(() => root.spawn(request));
    log.push({
      type: 'spawn',
      ...(request.requestId ? { requestId: request.requestId } : {}),
      threadId: thread.id,
    });
    return thread;
  };
  const talkerRequest: SpawnRequestInput = {
    requestId: newId('request', randomUUID),
    task: 'talk to a grandchild',
    name: 'talker',
    kernel: {
      type: 'scripted',
      turns: [
        [
          {
            type: 'spawn',
            as: 'gc',
            request: {
              task: 'answer the talker',
              name: 'gc',
              kernel: {
                type: 'scripted',
                turns: [
                  [{ type: 'reply', text: 'gc ready' }],
                  [
                    { type: 'send', to: 'parent', content: 'gc got {{inbox}}' },
                    { type: 'reply', text: 'gc answered' },
                  ],
                ],
              },
            },
          },
          { type: 'send', to: 'gc', content: 'hello gc', triggerTurn: true },
          { type: 'ask', kind: 'approval', prompt: 'may I start?' },
          { type: 'reply', text: 'talker ready: {{last}}' },
        ],
        [
          { type: 'ask', kind: 'approval', prompt: 'may I relay {{inbox}}?' },
          { type: 'send', to: 'root', content: 'talker got {{inbox}}' },
          { type: 'send', to: 'gc', content: 'relay {{inbox}}', triggerTurn: true },
          { type: 'reply', text: 'talker: {{inbox}}' },
        ],
      ],
    },
  };
  const talker = await spawnLogged(talkerRequest);
  const echo = await spawnLogged({
    requestId: newId('request', randomUUID),
    task: 'echo to the root',
    name: 'echo',
    kernel: {
      type: 'scripted',
      turns: [
        [{ type: 'reply', text: 'echo ready' }],
        [
          { type: 'send', to: 'root', content: 'echo {{inbox}}' },
          { type: 'reply', text: 'echo: {{inbox}}' },
        ],
      ],
    },
  });

  const counter = (name: string): SpawnRequestInput => ({
    requestId: newId('request', randomUUID),
    name,
    task: 'count the words of this task',
    tools: ['word_count'],
    kernel: { type: 'model' },
  });
  const counters = options.counters ? [await spawnLogged(counter('counter-before'))] : [];
  const firstAnswer = async (thread: AgentThread) => {
    const outcome = await eventually(
      async () =>
        (await retrying(() => root.wait({ threadIds: [thread.id], timeoutMs: 10_000 }))).outcomes[0],
      (found) => found?.latestTurn !== undefined,
      `${thread.name}'s first turn`,
      60_000,
    );
    return { name: thread.name, answer: outcome?.latestTurn?.result ?? '' };
  };
  // The one before the faults answers before they start.
  const counted = await Promise.all(counters.map(firstAnswer));

  // The person watching the talker's conversation (turns, results, an approval per turn): answers each
  // approval, and drops the receiver (without ack) every 5 items.
  let watching = true;
  const watcher = (async () => {
    const conversationId = relatedId('conversation', talker.id);
    for (let session = 1; watching; session++) {
      let receiver: ConversationNotificationReceiver;
      try {
        receiver = await ConversationNotificationReceiver.open(client, conversationId, {
          taskQueue,
          capability: service.rootCapability,
          ttlMs: 5_000,
          pollWaitMs: 1_000,
          receiverId: `watcher-${session}`,
        });
      } catch (error) {
        if (error instanceof KitError && (error.retryable || error.kind === ErrorKind.Conflict)) {
          session--;
          await delay(300);
          continue;
        }
        throw error;
      }
      log.push({ type: 'receiver-open', session });
      for (let count = 0; watching && count < 12;) {
        let notification;
        try {
          notification = await receiver.recv({ signal: AbortSignal.timeout(2_000) });
        } catch (error) {
          if (error instanceof KitError && error.retryable) continue;
          throw error;
        }
        if (!notification) break;
        count++;
        const body = notification.body;
        log.push({
          type: 'recv',
          session,
          seq: notification.seq,
          id: notification.id,
          kind: body.type,
          ...(body.type === 'interaction' ? { requestId: body.requestId } : {}),
        });
        if (body.type === 'interaction') {
          await retrying(() =>
            resolveNotification(
              client,
              notification,
              { type: 'approval', approved: true },
              { capability: service.rootCapability },
            ),
          );
          log.push({ type: 'resolved', requestId: body.requestId });
        }
      }
      await receiver[Symbol.asyncDispose]().catch(() => undefined);
      log.push({ type: 'receiver-close', session });
    }
  })();

  // Faults at seeded random moments while the root sends its messages.
  const sendEvery = Math.max(1, Math.floor(options.messages / (options.faults + 1)));
  const faultAt = new Set(
    Array.from({ length: options.faults }, (_, index) => (index + 1) * sendEvery + Math.floor(random() * 3)),
  );
  let faultsDone = 0;
  let pendingFault: Promise<void> = Promise.resolve();
  const recipients = [talker, echo];
  for (let index = 0; index < options.messages; index++) {
    if (faultAt.has(index)) {
      // The fault lands somewhere inside the next sends, not between them.
      const wait = Math.floor(random() * 400);
      const which = faultsDone++;
      log.push({ type: 'fault', what: `fault ${which} after ${wait} ms`, at: Date.now() - started });
      pendingFault = pendingFault
        .then(() => delay(wait))
        .then(() => options.fault(which, service.rootThreadId));
    }
    const recipient = recipients[index % 2]!;
    const content = `m${index}`;
    try {
      const message = await root.sendMessage({
        recipient: recipient.id,
        content,
        triggerTurn: index % 5 === 4,
      });
      log.push({ type: 'send', recipient: recipient.id, content, message });
    } catch (error) {
      log.push({ type: 'send', recipient: recipient.id, content, error: String(error) });
    }
    if (index === Math.floor(options.messages / 2)) {
      // The same spawn request after faults: the same thread, never a second admission.
      await spawnLogged(talkerRequest);
    }
  }
  await pendingFault;
  await options.settle?.();
  if (options.counters) counters.push(await spawnLogged(counter('counter-after')));

  // Quiet down: every thread idle (its approvals answered), every acknowledged message delivered.
  await eventually(
    async () =>
      (await retrying(() => root.listThreads())).filter((thread) => thread.id !== service.rootThreadId),
    (threads) =>
      threads.length === 3 + counters.length &&
      threads.every((thread) => thread.status === 'idle' && thread.turnsStarted === thread.turnsCompleted),
    'every thread idle',
    45_000,
  );
  const gc = (await root.listThreads()).find((thread) => thread.name === 'gc')!;
  for (const thread of [talker, echo, gc]) {
    const expected = log.filter((entry) => entry.type === 'send' && entry.recipient === thread.id).length;
    const view = await eventually(
      () => retrying(() => client.workflow.getHandle(thread.id).query(mailboxQuery)),
      (mailbox) => mailbox.received.length >= expected,
      `deliveries to ${thread.name}`,
      45_000,
    );
    log.push({
      type: 'mailbox',
      threadId: thread.id,
      received: view.received.map(({ id, seq, sender, content }) => ({ id, seq, sender, content })),
    });
  }
  if (counters[1]) counted.push(await firstAnswer(counters[1]));
  log.push({ type: 'root-messages', messages: await retrying(() => service.takeRootMessages()) });
  log.push({ type: 'snapshot', snapshot: await retrying(() => service.snapshot()) });
  // Let the watcher see the last notifications, then stop it.
  await delay(1_500);
  watching = false;
  await watcher;
  log.push({ type: 'shutdown', report: await retrying(() => service.shutdown()) });
  log.push({ type: 'snapshot', snapshot: await retrying(() => service.snapshot()) });
  return { log, rootThreadId: service.rootThreadId, durationMs: Date.now() - started, counted };
}

/** Retries a call while it fails with a retryable KitError (Timeout, Integration): the fault may be ongoing. */
async function retrying<Value>(call: () => Promise<Value>, attempts = 60): Promise<Value> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const transient =
        (error instanceof KitError && error.retryable) ||
        (error instanceof Error && /UNAVAILABLE|ECONNREFUSED|deadline/i.test(error.message));
      if (!transient || attempt >= attempts) throw error;
      await delay(500);
    }
  }
}
