import { parseInput } from './errors';
import { maxWaitingBytes, maxWaitingMessages, messageBytes } from './mailbox';
import { closed, denied, quota } from './run-errors';
import type { RunSnapshot, ThreadRecord } from './run-snapshot';
import { ControlScope, InterAgentMessage, isTerminal, SendMessageRequest } from './schemas';
import type { ThreadRegistry } from './thread-registry';

/** The part of a run's snapshot that messaging carries, in the snapshot's key order. */
export type MessagingSnapshot = Pick<
  RunSnapshot,
  'recipientSeq' | 'consumedSeq' | 'sentBytes' | 'consumedBytes' | 'rootMailbox'
>;

/** What a thread's turn reports it took from its mailbox: through which seq, and how many bytes in all. */
export interface Consumed {
  seq?: number | undefined;
  bytes?: number | undefined;
}

/**
 * Message sequencing of a root run (SPEC S4.3, S3.7): each recipient's sequence numbers, what its turns
 * consumed (so back-pressure bounds what waits), and the root's own mailbox.
 */
export class RunMessaging {
  private readonly recipientSeq: RunSnapshot['recipientSeq'];
  private readonly consumedSeq: RunSnapshot['consumedSeq'];
  private readonly sentBytes: RunSnapshot['sentBytes'];
  private readonly consumedBytes: RunSnapshot['consumedBytes'];
  private rootMailbox: InterAgentMessage[];

  constructor(
    private readonly registry: ThreadRegistry,
    snapshot: MessagingSnapshot,
  ) {
    this.recipientSeq = { ...snapshot.recipientSeq };
    this.consumedSeq = { ...snapshot.consumedSeq };
    this.sentBytes = { ...snapshot.sentBytes };
    this.consumedBytes = { ...snapshot.consumedBytes };
    this.rootMailbox = [...snapshot.rootMailbox];
  }

  /** Copies of the sequencing state, keys in the order `RunSnapshot` lists them. */
  snapshot(): MessagingSnapshot {
    return {
      recipientSeq: { ...this.recipientSeq },
      consumedSeq: { ...this.consumedSeq },
      sentBytes: { ...this.sentBytes },
      consumedBytes: { ...this.consumedBytes },
      rootMailbox: [...this.rootMailbox],
    };
  }

  /**
   * SPEC S4.3: who may message whom — the caller's ancestors and descendants (the root may message any
   * thread of its run) — and that neither is terminal. Throws PermissionDenied or Closed; changes nothing.
   */
  check(scope: ControlScope, request: SendMessageRequest): { sender: ThreadRecord; recipient: ThreadRecord } {
    const sender = this.registry.caller(scope);
    const { rootId } = this.registry;
    if (isTerminal(sender.thread.status))
      throw closed(`thread ${sender.thread.path} is ${sender.thread.status}: it cannot send messages`);
    const recipient = this.registry.get(request.recipient);
    const related =
      recipient &&
      recipient.thread.id !== sender.thread.id &&
      (sender.thread.id === rootId ||
        this.registry.isSelfOrAncestor(recipient.thread.id, sender.thread.id) ||
        this.registry.isSelfOrAncestor(sender.thread.id, recipient.thread.id));
    if (!recipient || !related) {
      throw denied(
        `thread ${sender.thread.path} may only message its ancestors and descendants, not ${request.recipient}`,
      );
    }
    if (isTerminal(recipient.thread.status))
      throw closed(
        `thread ${recipient.thread.path} is ${recipient.thread.status}: it takes no more messages`,
      );
    return { sender, recipient };
  }

  /**
   * Assigns a message its id, sequence number and timestamp (SPEC S4.3). Allowed recipients: the
   * caller's ancestors and descendants; the root may message any thread of its run.
   */
  prepare(
    scope: ControlScope,
    rawRequest: unknown,
    messageId: `message_${string}`,
    now: string,
  ): InterAgentMessage {
    const request = parseInput(SendMessageRequest, rawRequest, 'message');
    const { sender, recipient } = this.check(scope, request);
    const { rootId } = this.registry;
    const id = recipient.thread.id;
    const toRoot = id === rootId;
    const waiting = toRoot
      ? this.rootMailbox.length
      : (this.recipientSeq[id] ?? 0) - (this.consumedSeq[id] ?? 0);
    if (waiting >= maxWaitingMessages) {
      // Back-pressure instead of loss: every waiting message travels in the recipient's state.
      throw quota(
        `${recipient.thread.path} already has ${waiting} messages waiting for its next turn (limit ${maxWaitingMessages}): send one with triggerTurn, or wait`,
        { limit: 'waitingMessages', value: maxWaitingMessages },
      );
    }
    const bytes = messageBytes(request);
    const waitingBytes = toRoot
      ? this.rootMailbox.reduce((sum, message) => sum + messageBytes(message), 0)
      : Math.max(0, (this.sentBytes[id] ?? 0) - (this.consumedBytes[id] ?? 0));
    if (waiting > 0 && waitingBytes + bytes > maxWaitingBytes) {
      throw quota(
        `${recipient.thread.path} already has ${waitingBytes} bytes of messages waiting for its next turn (limit ${maxWaitingBytes}): send one with triggerTurn, or wait`,
        { limit: 'waitingBytes', value: maxWaitingBytes },
      );
    }
    if (!toRoot) this.sentBytes[id] = (this.sentBytes[id] ?? 0) + bytes;
    const seq = (this.recipientSeq[id] ?? 0) + 1;
    this.recipientSeq[id] = seq;
    const message: InterAgentMessage = {
      id: messageId,
      sender: sender.thread.id,
      recipient: id,
      seq,
      content: request.content,
      triggerTurn: request.triggerTurn,
      sentAt: now,
    };
    if (toRoot) this.rootMailbox.push(message);
    return message;
  }

  /** SPEC S3.7: drain the root mailbox in order, once. Only the root's scope may. */
  takeRoot(scope: ControlScope): InterAgentMessage[] {
    const caller = this.registry.caller(scope);
    if (caller.thread.id !== this.registry.rootId)
      throw denied(`only the root may take the root's messages, not ${caller.thread.path}`);
    const drained = this.rootMailbox;
    this.rootMailbox = [];
    return drained;
  }

  /** Root messages not yet taken, without taking them. */
  pendingRoot(): readonly InterAgentMessage[] {
    return this.rootMailbox;
  }

  /** A turn of `threadId` started having consumed its mailbox this far: that much no longer waits. */
  consumed(threadId: string, consumed: Consumed): void {
    if (consumed.seq !== undefined) {
      this.consumedSeq[threadId] = Math.max(this.consumedSeq[threadId] ?? 0, consumed.seq);
    }
    if (consumed.bytes !== undefined) {
      this.consumedBytes[threadId] = Math.max(this.consumedBytes[threadId] ?? 0, consumed.bytes);
    } else if (consumed.seq !== undefined && consumed.seq >= (this.recipientSeq[threadId] ?? 0)) {
      // A thread on code that does not count bytes: once it consumed every message, nothing waits.
      this.consumedBytes[threadId] = this.sentBytes[threadId] ?? 0;
    }
  }
}
