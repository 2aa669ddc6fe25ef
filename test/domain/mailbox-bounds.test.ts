// SPEC S3.10: the out-of-order buffer a mailbox carries (and the sends a root remembers) through continue-as-new is bounded. The root
// never lets more than maxWaitingMessages (and about maxWaitingBytes) wait for a thread, so anything
// further ahead or larger did not come from it and is dropped.
import { Mailbox, maxWaitingBytes, maxWaitingMessages } from '../../domain/mailbox';
import type { InterAgentMessage } from '../../domain/schemas';
import { RecentSends, rememberedSends } from '../../domain/recent-sends';
import { now } from '../helpers/run-state';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const messageOf = (seq: number, content = `message ${seq}`): InterAgentMessage => ({
  id: `message_${hex(seq)}`,
  sender: `thread_${'a'.repeat(32)}`,
  recipient: `thread_${'b'.repeat(32)}`,
  seq,
  content,
  triggerTurn: false,
  sentAt: now,
});

test('a delivery maxWaitingMessages or more ahead of the next seq is refused, one just inside is kept', () => {
  const mailbox = new Mailbox();
  const refusals: string[] = [];
  expect(mailbox.accept(messageOf(1 + maxWaitingMessages), (reason) => refusals.push(reason))).toEqual([]);
  expect(refusals).toHaveLength(1);
  expect(mailbox.snapshot().early).toEqual([]);
  mailbox.accept(messageOf(maxWaitingMessages));
  expect(mailbox.snapshot().early.map((message) => message.seq)).toEqual([maxWaitingMessages]);
});

test('the out-of-order buffer holds at most about maxWaitingBytes of content; releasing frees its room', () => {
  const mailbox = new Mailbox();
  const chunk = 'y'.repeat(300_000);
  const refusals: string[] = [];
  for (let seq = 2; seq <= 6; seq++) mailbox.accept(messageOf(seq, chunk), (reason) => refusals.push(reason));
  const kept = mailbox.snapshot().early.map((message) => message.seq);
  expect(kept.length * chunk.length).toBeLessThanOrEqual(maxWaitingBytes + 400_000);
  expect(refusals).toHaveLength(5 - kept.length);
  // The gap fills: every buffered message is released in order and the buffer is empty again.
  expect(mailbox.accept(messageOf(1)).map((message) => message.seq)).toEqual([1, ...kept]);
  expect(mailbox.snapshot().early).toEqual([]);
  // …and a restored mailbox counts the bytes of what it carried.
  const restored = new Mailbox({
    ...mailbox.snapshot(),
    early: [messageOf(10, chunk), messageOf(11, chunk), messageOf(12, chunk)],
  });
  const late: string[] = [];
  restored.accept(messageOf(13, chunk), (reason) => late.push(reason));
  expect(late).toHaveLength(1);
});

test('RecentSends answers a retried update id with its message, refuses other content, and forgets the oldest', () => {
  const sends = new RecentSends();
  const message = messageOf(1, 'hello');
  sends.remember('update-1', message);
  expect(new RecentSends(sends.snapshot()).find('update-1', 'hello')).toEqual(message);
  expect(() => sends.find('update-1', 'other')).toThrow(/other content/);
  for (let index = 2; index <= rememberedSends + 1; index++)
    sends.remember(`update-${index}`, messageOf(index));
  expect(sends.snapshot()).toHaveLength(rememberedSends);
  expect(sends.find('update-1', 'hello')).toBeUndefined();
  expect(JSON.stringify(sends.snapshot())).not.toContain('hello');
});
