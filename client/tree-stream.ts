import { z } from 'zod';
import { setMaxListeners } from 'node:events';
import { abortSignalOption, type ReadingClient } from './cancel';
import { Capability, rootCapability, RunKey } from '../domain/capability';
import type { InteractionResolution } from '../domain/conversation-schemas';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { parseId, relatedId, type ThreadId } from '../domain/ids';
import { LiveOutput, type LiveCallId, type LiveEnd } from '../domain/live-output';
import type { NotificationBody } from '../domain/schemas';
import { tailHistory, type HistoryEvent } from './history-tail';
import { parseCursor, rememberedSends, type Position, type SourceName } from './tree-cursor';
import { watchOutput } from './live-output';
import { conversationEventsOf, exists, type Reading } from './tree-conversation';
import { mailboxEventsOf, type MailboxReading } from './tree-mailbox';
import { checkedByThread, checkedWithKey } from './tree-proofs';
import { threadConversationStart } from './conversation-chain';

/**
 * SPEC S10.2: one stream of a whole root run, causally ordered, resumable from a cursor, readable after
 * the run has ended.
 *
 * Where the ordering happens: here, in the client, over the tree's own workflow histories. A thread's
 * conversation history holds, in order, everything its thread published (turn starts and ends, children
 * spawned, its messages for people, interactions, its end), every settlement and every live-output
 * flush; its own workflow's history holds every message it sent and every one its mailbox numbered.
 * Histories are durable until the namespace's retention, so a run is readable after it has ended, and
 * reading them (a long-poll per workflow, `waitNewEvent`) is not a billable action and adds nothing to
 * any workflow. A server-side journal would cost every thread one more signal per publishing task, and
 * a workflow that every event of the tree passes through; this costs the reader a long-poll per workflow.
 *
 * Causality: each source keeps its history's order; a child's histories are read only once its
 * `child-spawned` status has been yielded (a child's events after its spawn); a message received from
 * another thread waits until that thread's send has been yielded (a receipt after its send).
 *
 * What a workflow accepted is decided here as it decided it: a publish, settlement or flush counts only
 * when proven by the conversation's own thread under the run's key (a forged signal is in the history
 * but was refused), a notification id once, nothing after the thread's end; a message only with the
 * receipt its recipient answered.
 */

/** What happened, in one thread of the tree. */
export type TreeEventBody =
  | { type: 'notification'; id: string; body: NotificationBody }
  | { type: 'interaction-resolved'; resolution: InteractionResolution }
  | { type: 'output'; call: LiveCallId; offset: number; text: string; end?: LiveEnd }
  | { type: 'message-sent'; operationId: string; to: string; content: string }
  | {
      type: 'message-received';
      messageId: string;
      from: string;
      seq: number;
      sentAt: string;
      content: string;
    };

/** One event of the tree, with the cursor to resume after it. */
export interface TreeEvent {
  threadId: ThreadId;
  path: string;
  /** When its workflow took it (its history event's time). */
  at: string;
  event: TreeEventBody;
  /** Pass it as `after` to go on after this event (an opaque JSON string). */
  cursor: string;
}

/** Options of {@link streamTree}: who reads (the run's key, or a thread's capability), and how. */
export type StreamTreeOptions = (
  | {
      /** The run's key (`service.capability`): proves what each workflow accepted. */
      runKey: string;
      /** Stream only this thread's subtree (default: the whole tree, from the root). */
      threadId?: string;
      /**
       * That thread's ancestors (the root first): a message from one of them has no send in the stream,
       * so its receipt goes at once (without them, after {@link sendWaitMs}).
       */
      ancestors?: readonly string[];
    }
  | {
      /**
       * A thread's capability instead (thread-scoped controls, SPEC S3.9): the stream is of that thread's
       * subtree, and that thread's workflow tells which senders in the histories were proven.
       */
      capability: Capability;
    }
) &
  TreeReadOptions;

/** How a tree stream reads: where it starts, whether it watches output, until when. */
export interface TreeReadOptions {
  /** The path of the thread the stream starts at (`/root` for the root). */
  rootPath?: string;
  /** A cursor from an earlier event: the stream goes on after it. */
  after?: string;
  /**
   * Also watch every thread the stream follows (SPEC S10.1), so what their model calls generate streams
   * into it as `output` events. Off by default: a model call streams only while someone watches, and
   * each watch's long-poll is an update (a billable action per poll, at most one per 25 s per thread).
   */
  output?: boolean;
  /**
   * How long a message's receipt waits for its send to be yielded before it goes anyway (its sender's
   * history lagging or gone); {@link sendWaitMs} by default. Longer: stricter order, later receipts.
   */
  receiptWaitMs?: number;
  signal: AbortSignal;
}

interface Pending {
  threadId: ThreadId;
  source: SourceName;
  position: Position;
  at: string;
  event: TreeEventBody;
  after?: string | undefined;
  /** Arrival order, across sources: the oldest releasable item goes first. */
  order: number;
  since: number;
  /** Its history event's time (server clock, ms). */
  time: number;
  /** Mailbox items: the oldest event of its run with a request still unanswered after this one. */
  unanswered?: number | undefined;
}

/**
 * A turn start waits (at most this long) until its thread's own history has been read past its time:
 * the message that started the turn was taken there first, and its receipt goes before the turn.
 */
const turnStartWaitMs = 300;

const isTurnStart = (item: Pending) =>
  item.event.type === 'notification' &&
  item.event.body.type === 'status' &&
  item.event.body.event === 'turn-start';

/**
 * A receipt whose send was never seen goes after this long: its sender's history lost, or, in a subtree's
 * stream that was not told the subtree's ancestors, a message from above it.
 */
export const sendWaitMs = 10_000;

/** SPEC S2.4: a stream's options are checked before it reads anything. */
function checkStreamOptions(options: StreamTreeOptions): void {
  objectInput(options, 'streamTree options');
  if (abortSignalOption(options.signal, 'streamTree') === undefined)
    throw new KitError(ErrorKind.Protocol, 'streamTree: `signal` must be an AbortSignal', {
      fields: ['signal'],
    });
  if (options.receiptWaitMs !== undefined)
    parseInput(
      z
        .number()
        .int()
        .min(0)
        .max(24 * 3_600_000),
      options.receiptWaitMs,
      'receiptWaitMs',
    );
  if ('capability' in options) parseInput(Capability, options.capability, 'capability');
  else parseInput(RunKey, (options as { runKey?: unknown }).runKey, 'runKey');
}

/**
 * Streams every event of a root run's tree (SPEC S10.2), in causal order, from the start or after a
 * cursor, until `signal` aborts, or every history of the tree has closed.
 */
export async function* streamTree(
  client: ReadingClient,
  rootThreadId: string,
  options: StreamTreeOptions,
): AsyncGenerator<TreeEvent> {
  const rootId = parseId('thread', rootThreadId, 'rootThreadId');
  checkStreamOptions(options);
  // Each open history's poll listens to the signal while it waits: two per thread, not a leak.
  setMaxListeners(0, options.signal);
  // Watchers (`output`) stop with the stream, however it ends.
  const watching = new AbortController();
  setMaxListeners(0, watching.signal);
  options.signal.addEventListener('abort', () => watching.abort(), { once: true });
  try {
    yield* ordered(client, rootId, options, watching.signal);
  } finally {
    watching.abort();
  }
}

async function* ordered(
  client: ReadingClient,
  rootId: ThreadId,
  options: StreamTreeOptions,
  watching: AbortSignal,
): AsyncGenerator<TreeEvent> {
  const scoped = 'capability' in options ? options.capability : undefined;
  const keyed = 'runKey' in options ? options : undefined;
  const top = parseId('thread', scoped?.threadId ?? keyed?.threadId ?? rootId, 'threadId');
  const proofs = scoped ? checkedByThread(client.workflow, scoped) : checkedWithKey(keyed!.runKey, rootId);
  // Senders above the subtree: their sends are not in the stream, so their receipts wait for none.
  const above = new Set<string>(scoped?.lineage ?? keyed?.ancestors ?? []);
  const cursor = parseCursor(options.after, top, options.rootPath ?? '/root');
  const sends = new Set(cursor.sends);
  const queues = new Map<string, Pending[]>();
  /** The latest history event time read, per source (a turn start waits for its thread's). */
  const readUpTo = new Map<string, number>();
  const failures: unknown[] = [];
  let arrivals = 0;
  let wake: (() => void) | undefined;
  const running: Promise<void>[] = [];

  /** Reads one history of a thread into its queue, after the cursor's position. */
  const read = (
    threadId: ThreadId,
    source: SourceName,
    workflowId: string,
    take: (event: HistoryEvent) => Promise<(TreeEventBody & { after?: string })[]>,
    unanswered?: () => number | undefined,
  ) => {
    const key = `${threadId}|${source}`;
    const queue: Pending[] = [];
    queues.set(key, queue);
    const resumed = cursor.threads[threadId]!.at[source];
    readUpTo.set(key, 0);
    running.push(
      (async () => {
        // A child's workflows are started by its first task, maybe just after its spawn is seen.
        for (let tries = 0; !(await exists(client, workflowId)); tries++) {
          if (tries >= 300 || options.signal.aborted) return;
          await new Promise((done) => setTimeout(done, 200));
        }
        // The cursor's event is read again (it may hold more items than were yielded), or the oldest
        // request it had not answered, whose answer (the receipt) needs the request's content.
        const from = cursor.threads[threadId]!.from;
        const start =
          source === 'mailbox' && from && from.runId === resumed?.runId ? from.eventId : resumed?.eventId;
        const after =
          resumed && start !== undefined ? { runId: resumed.runId, eventId: start - 1 } : undefined;
        for await (const { runId, event } of tailHistory(client, workflowId, {
          ...(after ? { after } : {}),
          // Not a chain somebody started under the id after the thread's own had ended.
          ...(source === 'conversation'
            ? { firstRunId: () => threadConversationStart(client, workflowId, threadId) }
            : {}),
          signal: options.signal,
        })) {
          const eventId = Number(event.eventId);
          const time = event.eventTime
            ? Number(event.eventTime.seconds) * 1000 + Math.floor((event.eventTime.nanos ?? 0) / 1e6)
            : 0;
          const at = time ? new Date(time).toISOString() : '';
          (await take(event)).forEach(({ after: needs, ...body }, index) => {
            const yielded =
              resumed &&
              resumed.runId === runId &&
              (eventId < resumed.eventId || (eventId === resumed.eventId && index <= resumed.index));
            if (yielded) return;
            queue.push({
              threadId,
              source,
              position: { runId, eventId, index },
              at,
              event: body,
              after: needs,
              order: arrivals++,
              since: Date.now(),
              time,
              unanswered: unanswered?.(),
            });
          });
          readUpTo.set(key, Math.max(readUpTo.get(key) ?? 0, time));
          wake?.();
        }
      })().catch((failure: unknown) => {
        failures.push(failure);
        wake?.();
      }),
    );
  };

  const follow = (threadId: ThreadId) => {
    if (queues.has(`${threadId}|conversation`)) return;
    if (options.output) watch(threadId);
    const reading: Reading = {
      proven: async (from) => (from as Capability | undefined)?.threadId === threadId && (await proofs(from)),
      seen: new Set(),
      settled: new Set(),
      live: new LiveOutput(),
      ended: false,
    };
    const mailbox: MailboxReading = {
      pending: new Map(),
      eventId: 0,
      proven: proofs,
    };
    read(threadId, 'conversation', relatedId('conversation', threadId), (event) =>
      conversationEventsOf(client, event, reading),
    );
    read(
      threadId,
      'mailbox',
      threadId,
      (event) => {
        mailbox.eventId = Number(event.eventId);
        return mailboxEventsOf(client, event, mailbox);
      },
      () => {
        const events = [...mailbox.pending.values()].map((request) => request.eventId);
        return events.length > 0 ? Math.min(...events) : undefined;
      },
    );
  };

  /** Watches a thread's output: its flushes reach its conversation's history, read above. */
  const watch = (threadId: ThreadId) => {
    const capability = scoped ?? rootCapability(keyed!.runKey, rootId);
    void (async () => {
      for await (const event of watchOutput(client, threadId, { capability, signal: watching })) void event;
    })().catch(() => undefined);
  };

  /** The oldest head of a queue that may go now: a receipt only once its send has gone. */
  const next = (): Pending | undefined => {
    let best: Pending | undefined;
    for (const queue of queues.values()) {
      const head = queue[0];
      if (!head) continue;
      const ready = head.after
        ? sends.has(head.after) ||
          above.has(head.after.split('|')[0]!) ||
          Date.now() - head.since >= (options.receiptWaitMs ?? sendWaitMs)
        : !isTurnStart(head) ||
          (readUpTo.get(`${head.threadId}|mailbox`) ?? 0) >= head.time ||
          Date.now() - head.since >= turnStartWaitMs;
      if (ready && (!best || head.order < best.order)) best = head;
    }
    return best;
  };

  for (const threadId of Object.keys(cursor.threads)) follow(threadId as ThreadId);
  const aborted = new Promise<void>((resolve) =>
    options.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  while (!options.signal.aborted) {
    if (failures.length > 0) throw failures[0];
    const item = next();
    if (!item) {
      const waiting = [...queues.values()].some((queue) => queue.length > 0);
      const woken = new Promise<void>((resolve) => (wake = resolve));
      // Held items are looked at again, as their waits may run out.
      const recheck = waiting ? new Promise<void>((resolve) => setTimeout(resolve, 100).unref()) : undefined;
      // Every history read to its close (children are added only when their spawn is yielded).
      const allRead = Promise.all([...running]).then(() => 'done' as const);
      const outcome = await Promise.race([woken, aborted, allRead, ...(recheck ? [recheck] : [])]);
      wake = undefined;
      if (outcome === 'done' && !waiting && !next()) return;
      continue;
    }
    queues.get(`${item.threadId}|${item.source}`)!.shift();
    const thread = cursor.threads[item.threadId]!;
    thread.at[item.source] = item.position;
    if (item.source === 'mailbox') {
      if (item.unanswered !== undefined && item.unanswered < item.position.eventId)
        thread.from = { runId: item.position.runId, eventId: item.unanswered };
      else delete thread.from;
    }
    const body = item.event;
    if (body.type === 'message-sent') {
      const key = `${item.threadId}|${body.operationId}`;
      sends.add(key);
      cursor.sends.push(key);
      if (cursor.sends.length > rememberedSends) sends.delete(cursor.sends.shift()!);
    }
    // A send is remembered only until its receipt has gone, so the cursor holds the messages in flight.
    if (body.type === 'message-received' && item.after && sends.delete(item.after))
      cursor.sends.splice(cursor.sends.indexOf(item.after), 1);
    if (body.type === 'notification' && body.body.type === 'status' && body.body.event === 'child-spawned') {
      const child = body.body.threadId;
      if (child && !cursor.threads[child]) {
        cursor.threads[child] = { path: body.body.detail ?? child, at: {} };
        follow(child as ThreadId);
      }
    }
    yield {
      threadId: item.threadId,
      path: thread.path,
      at: item.at,
      event: body,
      cursor: JSON.stringify(cursor),
    };
  }
}
