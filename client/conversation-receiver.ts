import type { Client, WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { openReceiverUpdate, receiveUpdate, releaseReceiverUpdate } from '../domain/conversation-messages';
import { OpenReceiverRequest, ReceiverLease } from '../domain/conversation-schemas';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { abortable, abortSignalOption } from './cancel';
import { ConversationId } from '../domain/ids';
import { ConversationNotification } from '../domain/schemas';
import type { Capability } from '../domain/capability';
import type { conversationWorkflow } from '../workflows/conversation-workflow';
import { conversationHandle, checkStartOptions } from './conversations';
import {
  checkConversationExists,
  conversationStartOperation,
  startingConversation,
  type ConversationStartOptions,
} from './conversation-start';
import { kitCall, toKitError } from './errors';
import { refusedForNow } from './updates';

/** One step of a notification source: an item, a source error (as a value), or the end of the source. */
export type ReceiverStep =
  | { type: 'notification'; notification: ConversationNotification }
  | { type: 'error'; error: KitError }
  | { type: 'end' };

/** What a receiver reads from. `next` never rejects; `close` gives up whatever the source holds. */
export interface NotificationSource {
  next(): Promise<ReceiverStep>;
  close(): Promise<void>;
}

/** Options of {@link ConversationNotificationReceiver.open}. */
export interface OpenReceiverOptions extends ConversationStartOptions {
  /** Lease time-to-live: a receiver that stops renewing (a killed process) loses the lease after this. */
  ttlMs?: number;
  /** This receiver session's id; a fresh one by default. */
  receiverId?: string;
  /** Longest one server-side long-poll waits before the client polls again (server caps it at ttl/2). */
  pollWaitMs?: number;
  /**
   * How often a transient (Timeout/Integration) poll failure is retried before recv() reports it; a poll
   * that reaches a run just as it continues as new fails this way and succeeds on the next run.
   */
  pollRetries?: number;
}

/** The caller's proof, for a thread's conversation (SPEC S3.9); nothing for a standalone one. */
const from = (capability: Capability | undefined) => (capability ? { from: capability } : {});

/** Errors after which a later recv() may succeed (SPEC S5.7); every other kind fuses the receiver. */
const nonFusingKinds: ReadonlySet<string> = new Set([ErrorKind.Timeout, ErrorKind.Integration]);

/**
 * Exclusively receives a conversation's notifications (SPEC S5.3-S5.8).
 *
 * `recv()` resolves to the next notification, or `null` at end-of-stream, and rejects with a
 * {@link KitError} for a source error. `Timeout` and `Integration` errors allow a later `recv()`;
 * every other kind is thrown once and fuses the receiver, as does end-of-stream: later calls resolve to
 * `null`. A `recv()` aborted through its signal rejects with a `Timeout` KitError and loses nothing: the
 * poll it started keeps running and the next `recv()` gets its item. Calls made concurrently are served
 * one after another.
 *
 * Receiving the next item acknowledges the previous passive one; interactions stay pending until
 * resolved. Disposing releases the lease without acknowledging the last item.
 *
 * @example
 * await using receiver = await ConversationNotificationReceiver.open(client, conversationId, {
 *   taskQueue,
 *   capability: service.capability, // a thread's conversation: that thread's or an ancestor's
 * });
 * for await (const notification of receiver) console.log(notification.seq, notification.body);
 */
export class ConversationNotificationReceiver
  implements AsyncIterable<ConversationNotification>, AsyncDisposable
{
  private fused = false;
  private disposed = false;
  private inFlight: Promise<ReceiverStep> | undefined;
  private turn: Promise<void> = Promise.resolve();

  private constructor(private readonly source: NotificationSource) {}

  /**
   * Takes the conversation's lease and returns its receiver (S5.3), starting the conversation workflow
   * if it does not exist yet. Rejects with Conflict while another receiver's lease is live, with Closed
   * when the conversation's workflow has ended (it is not started again: `conversationReusePolicy`), and
   * with PermissionDenied when `capability` is sent to a conversation no thread of its tree owns (SPEC
   * S3.9: a standalone one, or one somebody else started under a thread's id; nothing is delivered), and
   * with NotFound when `capability` is sent and neither the conversation nor its thread exists.
   */
  static async open(
    client: Client,
    conversationId: string,
    options: OpenReceiverOptions,
  ): Promise<ConversationNotificationReceiver> {
    const { id } = checkStartOptions(client, conversationId, options, 'open a receiver');
    const request = parseInput(
      OpenReceiverRequest,
      {
        receiverId: options.receiverId ?? `receiver-${randomUUID()}`,
        ttlMs: options.ttlMs ?? 30_000,
        ...from(options.capability),
      },
      'receiver options',
    );
    // A tree's conversation is started here only when it or its thread exists (a mistyped id is NotFound).
    if (options.capability)
      await checkConversationExists(client, id, `open a receiver on ${id}`, options.capability);
    const lease = await startingConversation(id, `open a receiver on ${id}`, () =>
      client.workflow.executeUpdateWithStart(openReceiverUpdate, {
        args: [request],
        startWorkflowOperation: conversationStartOperation(id, options),
      }),
    );
    const handle = conversationHandle(client, id);
    return new ConversationNotificationReceiver(
      new ConversationSource(
        handle,
        id,
        lease,
        options.capability,
        options.pollWaitMs,
        options.pollRetries ?? 5,
      ),
    );
  }

  /**
   * Wraps a caller-provided source in the same receiver type and fusing rules (S5.8). The source yields
   * notifications, or KitErrors as values (a thrown error ends it); it owns ordering and acknowledgement.
   */
  static fromStream(
    stream: AsyncIterable<ConversationNotification | KitError>,
  ): ConversationNotificationReceiver {
    return new ConversationNotificationReceiver(new StreamSource(stream));
  }

  /** The next notification; `null` at end-of-stream (and forever after a fusing error). */
  async recv(options: { signal?: AbortSignal } = {}): Promise<ConversationNotification | null> {
    const signal = abortSignalOption(objectInput(options, 'recv options').signal, 'recv');
    const previous = this.turn;
    let finished!: () => void;
    const mine = new Promise<void>((resolve) => (finished = resolve));
    this.turn = previous.then(() => mine);
    try {
      await abortable(previous, signal, recvAborted);
      return await this.recvNow(signal);
    } finally {
      finished();
    }
  }

  private async recvNow(signal: AbortSignal | undefined): Promise<ConversationNotification | null> {
    if (this.fused || this.disposed) return null;
    this.inFlight ??= this.source.next();
    const step = await abortable(this.inFlight, signal, recvAborted);
    this.inFlight = undefined;
    if (step.type === 'notification') return step.notification;
    this.fused = step.type === 'end' || !nonFusingKinds.has(step.error.kind);
    if (step.type === 'end') return null;
    throw step.error;
  }

  /** Iterates until end-of-stream; a source error ends the loop by throwing it. */
  async *[Symbol.asyncIterator](): AsyncIterator<ConversationNotification> {
    for (;;) {
      const notification = await this.recv();
      if (notification === null) return;
      yield notification;
    }
  }

  /** Releases the lease without acknowledging the last item received (S5.5). Safe to call twice. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.source.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** What an aborted recv rejects with: a non-fusing Timeout KitError. */
const recvAborted = (signal: AbortSignal) =>
  new KitError(
    ErrorKind.Timeout,
    'recv aborted: the next recv() gets the item it was waiting for',
    { aborted: true },
    { cause: signal.reason },
  );

/** Long-polls the conversation workflow; keeps the lease alive between polls. */
class ConversationSource implements NotificationSource {
  private afterSeq = 0;
  private polling = false;
  private closed = false;
  private readonly renewal: NodeJS.Timeout;

  constructor(
    private readonly handle: WorkflowHandle<typeof conversationWorkflow>,
    private readonly conversationId: ConversationId,
    private readonly lease: ReceiverLease,
    private readonly capability: Capability | undefined,
    private readonly pollWaitMs: number | undefined,
    private readonly pollRetries: number,
  ) {
    // Polls renew the lease themselves; this covers a caller that takes long between recv() calls.
    this.renewal = setInterval(() => void this.renewBetweenPolls(), Math.max(50, lease.ttlMs / 3));
    this.renewal.unref();
  }

  async next(): Promise<ReceiverStep> {
    this.polling = true;
    try {
      for (let failures = 0; ;) {
        if (this.closed) return { type: 'end' };
        try {
          const result = await this.handle.executeUpdate(receiveUpdate, {
            args: [
              {
                receiverId: this.lease.receiverId,
                afterSeq: this.afterSeq,
                ...(this.pollWaitMs === undefined ? {} : { waitMs: this.pollWaitMs }),
                ...from(this.capability),
              },
            ],
          });
          if (result.type === 'idle') continue;
          if (result.type === 'end') return result;
          this.afterSeq = result.notification.seq;
          return result;
        } catch (error) {
          const kitError = toKitError(error, `receive from ${this.conversationId}`);
          // Every long-poll slot of the conversation taken (workflows/poll-slots.ts): nothing happened.
          const later = refusedForNow(kitError);
          if ((!kitError.retryable && !later) || failures >= this.pollRetries || this.closed) {
            return { type: 'error', error: kitError };
          }
          failures++;
          await delay(100 * failures);
        }
      }
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewal);
    await kitCall(
      `release the receiver of ${this.conversationId}`,
      () =>
        this.handle.executeUpdate(releaseReceiverUpdate, {
          args: [{ receiverId: this.lease.receiverId, ...from(this.capability) }],
        }),
      // Disposal does not fail: an unreleased lease expires after its TTL, which only delays the next receiver.
    ).catch(() => undefined);
  }

  private async renewBetweenPolls(): Promise<void> {
    if (this.polling || this.closed) return;
    await this.handle
      .executeUpdate(openReceiverUpdate, {
        args: [
          {
            receiverId: this.lease.receiverId,
            ttlMs: this.lease.ttlMs,
            renewOnly: true,
            ...from(this.capability),
          },
        ],
      })
      .catch(() => undefined); // a lost lease surfaces as Conflict on the next recv()
  }
}

/** Adapts a caller's async iterable (S5.8): KitErrors arrive as values; a thrown error ends the source. */
class StreamSource implements NotificationSource {
  private readonly iterator: AsyncIterator<ConversationNotification | KitError>;
  private ended = false;

  constructor(stream: AsyncIterable<ConversationNotification | KitError>) {
    this.iterator = stream[Symbol.asyncIterator]();
  }

  async next(): Promise<ReceiverStep> {
    if (this.ended) return { type: 'end' };
    try {
      const result = await this.iterator.next();
      if (result.done) {
        this.ended = true;
        return { type: 'end' };
      }
      if (result.value instanceof KitError) return { type: 'error', error: result.value };
      return { type: 'notification', notification: result.value };
    } catch (error) {
      this.ended = true;
      return { type: 'error', error: toKitError(error, 'notification source') };
    }
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.iterator.return?.();
  }
}
