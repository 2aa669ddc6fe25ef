import { z } from 'zod';
import { utf8Length } from './bytes';
import { ErrorKind, KitError } from './errors';
import { InterAgentMessage } from './schemas';

/** A received message and the turn that consumed it (absent while it waits for a turn). */
export const MailboxEntry = InterAgentMessage.extend({ consumedInTurn: z.number().int().min(1).optional() });
export type MailboxEntry = z.infer<typeof MailboxEntry>;

export const MailboxSnapshot = z
  .object({
    nextSeq: z.number().int().min(1),
    ready: z.array(InterAgentMessage).max(2_000),
    consumedLog: z.array(MailboxEntry).max(200),
    receivedCount: z.number().int().min(0),
  })
  .strict();
export type MailboxSnapshot = z.infer<typeof MailboxSnapshot>;

/** How many consumed messages the mailbox remembers for inspection, and how much of each one's content. */
const consumedLogLimit = 200;
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
export const maxWaitingMessages = 2_000;
/**
 * How many bytes of message content may wait for one thread's next turn (Temporal refuses a
 * continue-as-new input over 2 MiB). One message is always taken when nothing waits.
 */
export const maxWaitingBytes = 512 * 1024;
/**
 * The QuotaExceeded error for one more message of `bytes` to a recipient that already has `count`
 * messages of `waitingBytes` waiting, or undefined when it fits (SPEC S3.10: back-pressure before
 * admission). One message is always taken when nothing waits.
 */
export function waitingRefusal(
  recipientPath: string,
  count: number,
  waitingBytes: number,
  bytes: number,
): KitError | undefined {
  if (count >= maxWaitingMessages) {
    return new KitError(
      ErrorKind.QuotaExceeded,
      `${recipientPath} already has ${count} messages waiting for its next turn (limit ${maxWaitingMessages}): send one with triggerTurn, or wait`,
      { limit: 'waitingMessages', value: maxWaitingMessages },
    );
  }
  if (count > 0 && waitingBytes + bytes > maxWaitingBytes) {
    return new KitError(
      ErrorKind.QuotaExceeded,
      `${recipientPath} already has ${waitingBytes} bytes of messages waiting for its next turn (limit ${maxWaitingBytes}): send one with triggerTurn, or wait`,
      { limit: 'waitingBytes', value: maxWaitingBytes },
    );
  }
  return undefined;
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

  constructor(snapshot?: MailboxSnapshot) {
    this.nextSeq = snapshot?.nextSeq ?? 1;
    this.ready = [...(snapshot?.ready ?? [])];
    this.readyBytes = this.ready.reduce((sum, message) => sum + messageBytes(message), 0);
    this.consumedLog = [...(snapshot?.consumedLog ?? [])];
    this.receivedCount = snapshot?.receivedCount ?? 0;
  }

  /** Why `draft` cannot be admitted now (QuotaExceeded), or undefined. */
  refusal(recipientPath: string, draft: { content: string }): KitError | undefined {
    return waitingRefusal(recipientPath, this.ready.length, this.readyBytes, messageBytes(draft));
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
