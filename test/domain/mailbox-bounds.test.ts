// SPEC S3.10: a thread's mailbox is bounded in count and bytes, and refuses with QuotaExceeded before it
// admits; a retried update or request id is answered from the log, across continue-as-new.
import { ErrorKind, KitError } from '../../domain/errors';
import { jsonBytes } from '../../domain/bytes';
import {
  Mailbox,
  maxWaitingBytes,
  maxWaitingMessages,
  messageEnvelopeBytes,
  triggerRoomBytes,
} from '../../domain/mailbox';
import { RecentAnswerLog, rememberedAnswers } from '../../domain/recent-answers';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const draft = (n: number, content = `m${n}`) => ({
  id: `message_${hex(n)}` as const,
  sender: `thread_${'a'.repeat(32)}` as const,
  recipient: `thread_${'b'.repeat(32)}` as const,
  content,
  triggerTurn: false,
  sentAt: '2026-12-01T00:00:00.000Z',
});

test('a mailbox refuses the message past maxWaitingMessages with QuotaExceeded, and takes it after a turn', () => {
  const mailbox = new Mailbox();
  for (let n = 1; n <= maxWaitingMessages; n++) expect(mailbox.admit(draft(n)).seq).toBe(n);
  const refusal = mailbox.refusal('/root/b', draft(0));
  expect(refusal).toBeInstanceOf(KitError);
  expect(refusal?.kind).toBe(ErrorKind.QuotaExceeded);
  expect(refusal?.message).toContain(`limit ${maxWaitingMessages}`);
  expect(mailbox.take(1)).toHaveLength(maxWaitingMessages);
  expect(mailbox.refusal('/root/b', draft(0))).toBeUndefined();
  expect(mailbox.admit(draft(maxWaitingMessages + 1)).seq).toBe(maxWaitingMessages + 1);
});

test('a mailbox counts messages as carried (content as JSON, and the envelope), and refuses bytes past maxWaitingBytes', () => {
  const mailbox = new Mailbox();
  // Filled with messages of 100,000 bytes of content each: 5 fit in 512 KiB with their envelopes.
  const big = 'x'.repeat(100_000 - 2);
  for (let n = 1; n <= 5; n++) mailbox.admit(draft(n, big));
  const used = 5 * (100_000 + messageEnvelopeBytes);
  const room = maxWaitingBytes - used - messageEnvelopeBytes - 2;
  expect(mailbox.refusal('/root/b', { content: 'y'.repeat(room + 1) })?.kind).toBe(ErrorKind.QuotaExceeded);
  expect(mailbox.refusal('/root/b', { content: 'y'.repeat(room) })).toBeUndefined();
  // A control character takes 6 bytes as JSON: counted so.
  expect(mailbox.refusal('/root/b', { content: '\u0001'.repeat(Math.ceil(room / 6) + 1) })?.kind).toBe(
    ErrorKind.QuotaExceeded,
  );
  expect(jsonBytes(mailbox.snapshot().ready)).toBeLessThanOrEqual(used);
});

test('a full mailbox still takes one short message asking for a turn, while none waiting asks for one', () => {
  for (const fill of ['count', 'bytes'] as const) {
    const mailbox = new Mailbox();
    let n = 0;
    for (const content of fill === 'count' ? ['m'] : ['x'.repeat(99_000), 'm'])
      while (!mailbox.refusal('/root/b', { content })) mailbox.admit(draft(++n, content));
    if (fill === 'count') expect(n).toBe(maxWaitingMessages);
    const asking = { content: 'take them', triggerTurn: true };
    expect(mailbox.refusal('/root/b', { content: 'more' })?.message).toMatch(
      /send one with triggerTurn and at most 1024 bytes/,
    );
    const long = { content: 'y'.repeat(triggerRoomBytes - messageEnvelopeBytes - 1), triggerTurn: true };
    expect(mailbox.refusal('/root/b', long)?.kind).toBe(ErrorKind.QuotaExceeded);
    // Only a workflow that may (its patch) gives the room.
    expect(mailbox.refusal('/root/b', asking, () => false)?.kind).toBe(ErrorKind.QuotaExceeded);
    expect(mailbox.refusal('/root/b', asking)).toBeUndefined();
    mailbox.admit({ ...draft(0, asking.content), triggerTurn: true });
    // The turn is asked for now: nothing more until it takes them, a message asking again included.
    expect(mailbox.refusal('/root/b', asking)?.message).toMatch(/already asked for and takes them: wait/);
    expect(mailbox.refusal('/root/b', { content: 'more' })?.kind).toBe(ErrorKind.QuotaExceeded);
    const taken = mailbox.take(1);
    expect(taken.at(-1)?.content).toBe('take them');
    expect(mailbox.refusal('/root/b', { content: 'more' })).toBeUndefined();
  }
});

test('a mailbox whose waiting messages already ask for a turn gives no room: the turn will take them', () => {
  const mailbox = new Mailbox();
  mailbox.admit({ ...draft(1), triggerTurn: true });
  for (let n = 2; n <= maxWaitingMessages; n++) mailbox.admit(draft(n));
  expect(mailbox.refusal('/root/b', { content: 'go', triggerTurn: true })?.message).toMatch(
    /already asked for/,
  );
});

test('the envelope bound holds for the largest envelope a message can have', () => {
  const largest = {
    ...draft(1, ''),
    seq: Number.MAX_SAFE_INTEGER,
    triggerTurn: false,
    sentAt: '+275760-09-13T00:00:00.000Z',
  };
  expect(jsonBytes(largest) - jsonBytes('')).toBeLessThanOrEqual(messageEnvelopeBytes);
  const mailbox = new Mailbox();
  mailbox.admit({ ...draft(1, 'c'.repeat(10_000)) });
  mailbox.take(Number.MAX_SAFE_INTEGER);
  // A consumed message keeps the start of its content only.
  expect(jsonBytes(mailbox.snapshot().consumedLog[0])).toBeLessThanOrEqual(messageEnvelopeBytes + 400);
});

test('RecentAnswerLog answers a retried id with its answer, refuses another input, forgets the oldest', () => {
  const log = new RecentAnswerLog();
  log.remember('update|1', { content: 'hello' }, { id: 'message_1' });
  expect(new RecentAnswerLog(log.snapshot()).find('update|1', { content: 'hello' })).toEqual({
    id: 'message_1',
  });
  expect(() => log.find('update|1', { content: 'other' })).toThrow(/another input/);
  expect(log.find('update|2', { content: 'hello' })).toBeUndefined();
  expect(log.find(undefined, {})).toBeUndefined();
  for (let n = 2; n <= rememberedAnswers + 1; n++) log.remember(`update|${n}`, n, n);
  expect(log.find('update|1', { content: 'hello' })).toBeUndefined();
  expect(log.find(`update|${rememberedAnswers + 1}`, rememberedAnswers + 1)).toBe(rememberedAnswers + 1);
  // Ids and answers too large to carry are not remembered, so the log stays bounded in bytes.
  log.remember('x'.repeat(201), 1, 1);
  log.remember('update|big', 1, 'y'.repeat(3_000));
  expect(log.snapshot().some((entry) => entry.id.length > 200 || entry.id === 'update|big')).toBe(false);
});
