import { z } from 'zod';
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
  })
  .strict();
export type MailboxSnapshot = z.infer<typeof MailboxSnapshot>;

/** How many consumed messages the mailbox remembers for inspection. */
const consumedLogLimit = 1000;

/**
 * A thread's inbox (SPEC S4.3): accepts messages in any arrival order and releases them exactly once,
 * in per-recipient sequence order. Duplicates (same seq) are dropped.
 */
export class Mailbox {
  private nextSeq: number;
  private readonly early = new Map<number, InterAgentMessage>();
  private ready: MailboxEntry[];
  private consumedLog: MailboxEntry[];
  private receivedCount: number;

  constructor(snapshot?: MailboxSnapshot) {
    this.nextSeq = snapshot?.nextSeq ?? 1;
    for (const message of snapshot?.early ?? []) this.early.set(message.seq, message);
    this.ready = [...(snapshot?.ready ?? [])];
    this.consumedLog = [...(snapshot?.consumedLog ?? [])];
    this.receivedCount = snapshot?.receivedCount ?? 0;
  }

  /** Accepts a delivery; returns the messages it made ready (in order), possibly none. */
  accept(message: InterAgentMessage): InterAgentMessage[] {
    if (message.seq < this.nextSeq || this.early.has(message.seq)) return [];
    this.early.set(message.seq, message);
    const released: InterAgentMessage[] = [];
    for (let next = this.early.get(this.nextSeq); next; next = this.early.get(this.nextSeq)) {
      this.early.delete(this.nextSeq);
      this.nextSeq += 1;
      this.receivedCount += 1;
      this.ready.push(next);
      released.push(next);
    }
    return released;
  }

  /** Takes every ready message for `turn`, in order. */
  take(turn: number): InterAgentMessage[] {
    const taken = this.ready.map((message) => ({ ...message, consumedInTurn: turn }));
    this.ready = [];
    this.consumedLog = [...this.consumedLog, ...taken].slice(-consumedLogLimit);
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
    };
  }
}
