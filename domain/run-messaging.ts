import { Mailbox, rootMailboxLimits } from './mailbox';
import { closed, denied } from './run-errors';
import type { RunSnapshot, ThreadRecord } from './run-snapshot';
import { ControlScope, InterAgentMessage, isTerminal, SendMessageRequest } from './schemas';
import type { ThreadRegistry } from './thread-registry';

/** The part of a run's snapshot that messaging carries. */
export type MessagingSnapshot = Pick<RunSnapshot, 'rootMailbox'>;

/**
 * Messaging of a root run (SPEC S4.3, S3.7): who may message whom, and the root's own mailbox — the
 * same `Mailbox` every thread has (it numbers what it admits), with the root's smaller limits. Every
 * other thread's mailbox is its own workflow's (SPEC S3.1).
 */
export class RunMessaging {
  /** The root's mailbox: the same class every thread's workflow has (SPEC S3.1). */
  readonly rootMailbox: Mailbox;

  constructor(
    private readonly registry: ThreadRegistry,
    snapshot: MessagingSnapshot,
  ) {
    this.rootMailbox = new Mailbox(snapshot.rootMailbox, rootMailboxLimits);
  }

  snapshot(): MessagingSnapshot {
    return { rootMailbox: this.rootMailbox.snapshot() };
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

  /** SPEC S3.7: drain the root mailbox in order, once, for the root's `turn`. Only the root's scope may. */
  takeRoot(scope: ControlScope, turn: number): InterAgentMessage[] {
    const caller = this.registry.caller(scope);
    if (caller.thread.id !== this.registry.rootId)
      throw denied(`only the root may take the root's messages, not ${caller.thread.path}`);
    return this.rootMailbox.take(Math.max(1, turn));
  }

  /** Root messages not yet taken, without taking them. */
  pendingRoot(): readonly InterAgentMessage[] {
    return this.rootMailbox.waiting;
  }
}
