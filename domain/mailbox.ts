import { z } from 'zod';
import { clipJsonBytes, jsonBytes } from './bytes';
import { ErrorKind, KitError } from './errors';
import { InterAgentMessage } from './schemas';

/** A received message and the turn that consumed it (absent while it waits for a turn). */
export const MailboxEntry = InterAgentMessage.extend({ consumedInTurn: z.number().int().min(1).optional() });
export type MailboxEntry = z.infer<typeof MailboxEntry>;

export const MailboxSnapshot = z
  .object({
    nextSeq: z.number().int().min(1),
    // One more than a thread's bound: the message that asks for the turn that takes a full mailbox.
    ready: z.array(InterAgentMessage).max(2_001),
    consumedLog: z.array(MailboxEntry).max(50),
    receivedCount: z.number().int().min(0),
  })
  .strict();
export type MailboxSnapshot = z.infer<typeof MailboxSnapshot>;

/** How many consumed messages the mailbox remembers for inspection, and how many bytes of each one's content. */
const consumedLogLimit = 50;
const consumedLogContentBytes = 256;

/** A consumed message as the log keeps it: long contents are cut, so the log stays small in the snapshot. */
const logged = (entry: MailboxEntry): MailboxEntry => ({
  ...entry,
  content: clipJsonBytes(
    entry.content,
    consumedLogContentBytes,
    (cut) => `… [${cut} more characters, consumed in turn ${entry.consumedInTurn}]`,
  ),
});

/**
 * The most a message's envelope (id, sender, recipient, seq, flags, time) takes as JSON around its
 * content; `mailbox-bounds.test.ts` checks it against the largest envelope a message can have.
 */
export const messageEnvelopeBytes = 256;

/** What a message counts for in the waiting-bytes bound: all of it, as JSON (as it is carried). */
export const messageBytes = (message: { content: string }): number =>
  jsonBytes(message.content) + messageEnvelopeBytes;

/** How many messages may wait for one thread's next turn, and how many bytes; all travel in its state. */
export interface MailboxLimits {
  messages: number;
  bytes: number;
}
/** A sub-agent's mailbox: 2,000 messages, 512 KiB (SPEC S3.10). */
export const threadMailboxLimits: MailboxLimits = { messages: 2_000, bytes: 512 * 1024 };
/** The root's mailbox, smaller: the root's input also carries the registry of the whole tree. */
export const rootMailboxLimits: MailboxLimits = { messages: 400, bytes: 128 * 1024 };
export const maxWaitingMessages = threadMailboxLimits.messages;
export const maxWaitingBytes = threadMailboxLimits.bytes;

/**
 * The room a full mailbox still has for one message with `triggerTurn` (its envelope and up to 1 KiB of
 * content as JSON) while no waiting message asks for a turn yet: without it, a mailbox filled by
 * messages that ask for none would wedge its thread, since the message that asks for the turn that
 * takes them would be refused too. So a mailbox holds at most `messages + 1` and `bytes + this`.
 */
export const triggerRoomBytes = messageEnvelopeBytes + 1_024;

/** What a mailbox holds, and what it is asked to take. */
interface Waiting {
  count: number;
  bytes: number;
  /** Whether a waiting message already asks for the next turn (which will take them all). */
  turnAsked: boolean;
}

/**
 * The QuotaExceeded error for one more message of `bytes` to a recipient whose mailbox holds `waiting`,
 * or undefined when it fits (SPEC S3.10: back-pressure before admission). One message (its content at
 * most `maxMessageBytes`) is always taken when nothing waits, and a short one with `triggerTurn` is
 * taken past the limits while no waiting message asks for a turn ({@link triggerRoomBytes}); `useRoom`
 * is asked before that room is given (a workflow asks its patch there).
 */
export function waitingRefusal(
  recipientPath: string,
  waiting: Waiting,
  message: { bytes: number; triggerTurn?: boolean },
  limits: MailboxLimits = threadMailboxLimits,
  useRoom: () => boolean = () => true,
): KitError | undefined {
  const overCount = waiting.count >= limits.messages;
  const overBytes = waiting.count > 0 && waiting.bytes + message.bytes > limits.bytes;
  if (!overCount && !overBytes) return undefined;
  const short = message.bytes <= triggerRoomBytes;
  if (message.triggerTurn && short && !waiting.turnAsked && useRoom()) return undefined;
  const held = overCount
    ? `${waiting.count} messages waiting for its next turn (limit ${limits.messages})`
    : `${waiting.bytes} bytes of messages waiting for its next turn (limit ${limits.bytes})`;
  const advice = waiting.turnAsked
    ? 'its next turn is already asked for and takes them: wait for it'
    : `send one with triggerTurn and at most ${triggerRoomBytes - messageEnvelopeBytes} bytes of content, or wait`;
  return new KitError(ErrorKind.QuotaExceeded, `${recipientPath} already has ${held}: ${advice}`, {
    limit: overCount ? 'waitingMessages' : 'waitingBytes',
    value: overCount ? limits.messages : limits.bytes,
  });
}

/** A message as its sender makes it; the recipient's mailbox gives it its sequence number. */
export type MessageDraft = Omit<InterAgentMessage, 'seq'>;

/**
 * A thread's inbox (SPEC S3.1, S4.3): the recipient owns it and numbers what it admits, so messages are
 * released exactly once, in sequence order, and never more than the bounds wait for a turn.
 */
export class Mailbox {
  private nextSeq: number;
  private ready: InterAgentMessage[];
  private readyBytes: number;
  private consumedLog: MailboxEntry[];
  private receivedCount: number;

  constructor(
    snapshot?: MailboxSnapshot,
    private readonly limits: MailboxLimits = threadMailboxLimits,
  ) {
    this.nextSeq = snapshot?.nextSeq ?? 1;
    this.ready = [...(snapshot?.ready ?? [])];
    this.readyBytes = this.ready.reduce((sum, message) => sum + messageBytes(message), 0);
    this.consumedLog = [...(snapshot?.consumedLog ?? [])];
    this.receivedCount = snapshot?.receivedCount ?? 0;
  }

  /**
   * Why `draft` cannot be admitted now (QuotaExceeded), or undefined. A short draft with `triggerTurn`
   * fits a full mailbox while no waiting message asks for a turn, if `useRoom` says so.
   */
  refusal(
    recipientPath: string,
    draft: { content: string; triggerTurn?: boolean },
    useRoom?: () => boolean,
  ): KitError | undefined {
    return waitingRefusal(
      recipientPath,
      { count: this.ready.length, bytes: this.readyBytes, turnAsked: this.turnAsked },
      { bytes: messageBytes(draft), ...(draft.triggerTurn ? { triggerTurn: true } : {}) },
      this.limits,
      useRoom,
    );
  }

  /** Whether a waiting message asks for the next turn, which takes every waiting message. */
  private get turnAsked(): boolean {
    return this.ready.some((message) => message.triggerTurn);
  }

  /** Admits a message (check {@link refusal} first): gives it the next sequence number. */
  admit(draft: MessageDraft): InterAgentMessage {
    const message: InterAgentMessage = { ...draft, seq: this.nextSeq };
    this.nextSeq += 1;
    this.receivedCount += 1;
    this.ready.push(message);
    this.readyBytes += messageBytes(message);
    return message;
  }

  /** Takes every ready message for `turn`, in order. */
  take(turn: number): InterAgentMessage[] {
    const taken = this.ready.map((message) => ({ ...message, consumedInTurn: turn }));
    this.ready = [];
    this.readyBytes = 0;
    this.consumedLog = [...this.consumedLog, ...taken.map(logged)].slice(-consumedLogLimit);
    return taken.map(({ consumedInTurn: _turn, ...message }) => message);
  }

  /**
   * Consumed (most recent {@link consumedLogLimit}) then waiting messages — the latest `limit` of them,
   * so a query answer stays far below Temporal's payload limit however many messages wait.
   */
  view(limit = 5_000): MailboxEntry[] {
    return [...this.consumedLog, ...this.ready].slice(-limit);
  }

  /** The messages waiting for a turn, in order. */
  get waiting(): readonly InterAgentMessage[] {
    return this.ready;
  }

  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  get count(): number {
    return this.receivedCount;
  }

  snapshot(): MailboxSnapshot {
    return {
      nextSeq: this.nextSeq,
      ready: [...this.ready],
      consumedLog: [...this.consumedLog],
      receivedCount: this.receivedCount,
    };
  }
}
