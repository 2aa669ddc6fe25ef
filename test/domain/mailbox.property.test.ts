import fc from 'fast-check';
import { Mailbox, MailboxSnapshot, maxWaitingBytes, maxWaitingMessages } from '../../domain/mailbox';
import { now, propertyParameters } from '../helpers/run-state';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const sender = `thread_${'a'.repeat(32)}` as const;
const recipient = `thread_${'b'.repeat(32)}` as const;

/** The mailbox a continue-as-new resumes with: its snapshot through JSON and the schema. */
const restore = (mailbox: Mailbox) =>
  new Mailbox(MailboxSnapshot.parse(JSON.parse(JSON.stringify(mailbox.snapshot()))));

const step = fc.record({
  size: fc.integer({ min: 0, max: 300_000 }),
  takeAfter: fc.boolean(),
  restoreBefore: fc.boolean(),
});

test('the recipient numbers what it admits 1, 2, 3…; turns take each message once, in order; bounds always hold', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
      let mailbox = new Mailbox();
      let admitted = 0;
      const taken: number[] = [];
      let turn = 0;
      for (const { size, takeAfter, restoreBefore } of steps) {
        if (restoreBefore) mailbox = restore(mailbox);
        const draft = {
          id: `message_${hex(admitted + 1)}` as const,
          sender,
          recipient,
          content: 'x'.repeat(size),
          triggerTurn: false,
          sentAt: now,
        };
        if (!mailbox.refusal('/root/b', draft)) {
          const message = mailbox.admit(draft);
          admitted += 1;
          expect(message.seq).toBe(admitted);
        }
        const waiting = mailbox.snapshot().ready;
        expect(waiting.length).toBeLessThanOrEqual(maxWaitingMessages);
        const bytes = waiting.reduce((sum, message) => sum + message.content.length, 0);
        expect(waiting.length <= 1 || bytes <= maxWaitingBytes).toBe(true);
        if (takeAfter) taken.push(...mailbox.take(++turn).map((message) => message.seq));
      }
      taken.push(...mailbox.take(turn + 1).map((message) => message.seq));
      expect(taken).toEqual(Array.from({ length: admitted }, (_, index) => index + 1));
      expect(mailbox.count).toBe(admitted);
    }),
    propertyParameters(200),
  );
});
