import { z } from 'zod';
import { utf8Length } from './bytes';
import { InterAgentMessage } from './schemas';

/** A received message and the turn that consumed it (absent while it waits for a turn). */
export const MailboxEntry = InterAgentMessage.extend({ consumedInTurn: z.number().int().min(1).optional() });
export type MailboxEntry = z.infer<typeof MailboxEntry>;

export const MailboxSnapshot = z
  .object({
    nextSeq: z.number().int().min(1),
    early: z.array(InterAgentMessage),
    ready: z.array(MailboxEntry),
    consumedLog: z.array(MailboxEntry),
    receivedCount: z.number().int().min(0),
    /** UTF-8 bytes of every message content released in order so far (runs before this did not count). */
    releasedBytes: z.number().int().min(0).default(0),
  })
  .strict();
export type MailboxSnapshot = z.infer<typeof MailboxSnapshot>;

/** How many consumed messages the mailbox remembers for inspection, and how much of each one's content. */
const consumedLogLimit = 1000;
const consumedLogContent = 200;

/** A consumed message as the log keeps it: long contents are cut, so the log stays small in the snapshot. */
const logged = (entry: MailboxEntry): MailboxEntry =>
  entry.content.length <= consumedLogContent
    ? entry
    : {
        ...entry,
        content: `${entry.content.slice(0, consumedLogContent)}… [${entry.content.length - consumedLogContent} more characters, consumed in turn ${entry.consumedInTurn}]`,
      };

/** What a message counts for in the waiting-bytes bound: its content's UTF-8 size. */
export const messageBytes = (message: { content: string }): number => utf8Length(message.content);

/** How many messages may wait for one thread's next turn; they all travel in its continue-as-new state. */
export const maxWaitingMessages = 5_000;
/**
 * How many bytes of message content may wait for one thread's next turn (Temporal refuses a
 * continue-as-new input over 2 MiB). One message is always taken when nothing waits.
 */
export const maxWaitingBytes = 512 * 1024;
/** Largest content of one message, in UTF-8 bytes (SendMessageRequest: 100,000 characters, ≤ 4 bytes each). */
const maxMessageBytes = 400_000;

/**
 * Why a delivery is refused, or undefined to accept it. The root numbers a recipient's messages and
 * never lets more than {@link maxWaitingMessages} (and about {@link maxWaitingBytes}) wait, so a
 * delivery further ahead than that, or one that would grow the out-of-order buffer past those bounds,
 * did not come from the root: it is dropped instead of being carried through continue-as-new.
 */
export function deliveryRefusal(
  seq: number,
  nextSeq: number,
  early: { count: number; bytes: number },
  bytes: number,
): string | undefined {
  if (seq >= nextSeq + maxWaitingMessages)
    return `seq ${seq} is ${maxWaitingMessages} or more ahead of ${nextSeq}`;
  if (early.count >= maxWaitingMessages) return `${early.count} deliveries already wait out of order`;
  if (early.bytes + bytes > maxWaitingBytes + maxMessageBytes)
    return `${early.bytes + bytes} bytes would wait out of order`;
  return undefined;
}

/**
 * A thread's inbox (SPEC S4.3): accepts messages in any arrival order and releases them exactly once,
 * in per-recipient sequence order. Duplicates (same seq) are dropped.
 */
export class Mailbox {
  private nextSeq: number;
  private readonly early = new Map<number, InterAgentMessage>();
  private earlyBytes = 0;
  private ready: MailboxEntry[];
  private consumedLog: MailboxEntry[];
  private receivedCount: number;
  private releasedByteCount: number;

  constructor(snapshot?: MailboxSnapshot) {
    this.nextSeq = snapshot?.nextSeq ?? 1;
    for (const message of snapshot?.early ?? []) {
      this.early.set(message.seq, message);
      this.earlyBytes += messageBytes(message);
    }
    this.ready = [...(snapshot?.ready ?? [])];
    this.consumedLog = [...(snapshot?.consumedLog ?? [])];
    this.receivedCount = snapshot?.receivedCount ?? 0;
    this.releasedByteCount = snapshot?.releasedBytes ?? 0;
  }

  /**
   * Accepts a delivery; returns the messages it made ready (in order), possibly none. A duplicate, or a
   * delivery outside the bounds of {@link deliveryRefusal}, is dropped (`refused` says why).
   */
  accept(message: InterAgentMessage, refused?: (reason: string) => void): InterAgentMessage[] {
    if (message.seq < this.nextSeq || this.early.has(message.seq)) return [];
    const refusal = deliveryRefusal(
      message.seq,
      this.nextSeq,
      { count: this.early.size, bytes: this.earlyBytes },
      messageBytes(message),
    );
    if (refusal) {
      refused?.(refusal);
      return [];
    }
    this.early.set(message.seq, message);
    this.earlyBytes += messageBytes(message);
    const released: InterAgentMessage[] = [];
    for (let next = this.early.get(this.nextSeq); next; next = this.early.get(this.nextSeq)) {
      this.early.delete(this.nextSeq);
      this.earlyBytes -= messageBytes(next);
      this.nextSeq += 1;
      this.receivedCount += 1;
      this.releasedByteCount += messageBytes(next);
      this.ready.push(next);
      released.push(next);
    }
    return released;
  }

  /** Takes every ready message for `turn`, in order. */
  take(turn: number): InterAgentMessage[] {
    const taken = this.ready.map((message) => ({ ...message, consumedInTurn: turn }));
    this.ready = [];
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

  /** The highest sequence number released in order so far. */
  get releasedThrough(): number {
    return this.nextSeq - 1;
  }

  /** UTF-8 bytes of every message content released in order so far (the root's back-pressure counts them). */
  get releasedBytes(): number {
    return this.releasedByteCount;
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
      early: [...this.early.values()],
      ready: [...this.ready],
      consumedLog: [...this.consumedLog],
      receivedCount: this.receivedCount,
      releasedBytes: this.releasedByteCount,
    };
  }
}
