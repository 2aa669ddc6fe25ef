import fc from 'fast-check';
import { Mailbox, MailboxSnapshot } from '../../domain/mailbox';
import type { InterAgentMessage } from '../../domain/schemas';
import { now, propertyParameters } from '../helpers/run-state';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const sender = `thread_${'a'.repeat(32)}` as const;
const recipient = `thread_${'b'.repeat(32)}` as const;

const messageOf = (seq: number): InterAgentMessage => ({
  id: `message_${hex(seq)}`,
  sender,
  recipient,
  seq,
  content: `message ${seq}`,
  triggerTurn: seq % 3 === 0,
  sentAt: now,
});

const range = (n: number) => Array.from({ length: n }, (_, position) => position + 1);

/**
 * A delivery stream: every seq 1..n at least once, some redelivered, in any order; and for each
 * delivery whether the thread takes its ready messages afterwards and whether the mailbox goes
 * through a snapshot (continue-as-new) before it.
 */
const streamArbitrary = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc
    .array(fc.integer({ min: 1, max: n }), { maxLength: n })
    .chain((duplicates) =>
      fc.shuffledSubarray([...range(n), ...duplicates], { minLength: n + duplicates.length }),
    )
    .chain((deliveries) =>
      fc.record({
        n: fc.constant(n),
        deliveries: fc.constant(deliveries),
        steps: fc.array(fc.record({ takeAfter: fc.boolean(), restoreBefore: fc.boolean() }), {
          minLength: deliveries.length,
          maxLength: deliveries.length,
        }),
      }),
    ),
);

/** The mailbox a continue-as-new resumes with: its snapshot through JSON and the schema. */
const restore = (mailbox: Mailbox) =>
  new Mailbox(MailboxSnapshot.parse(JSON.parse(JSON.stringify(mailbox.snapshot()))));

test('any arrival order with redeliveries releases each seq exactly once, in order, as soon as it can', () => {
  fc.assert(
    fc.property(streamArbitrary, ({ n, deliveries, steps }) => {
      let mailbox = new Mailbox();
      const delivered = new Set<number>();
      const released: number[] = [];
      const taken: InterAgentMessage[] = [];
      let turn = 0;
      deliveries.forEach((seq, position) => {
        const { takeAfter, restoreBefore } = steps[position]!;
        if (restoreBefore) mailbox = restore(mailbox);
        delivered.add(seq);
        released.push(...mailbox.accept(messageOf(seq)).map((message) => message.seq));
        // Released so far is exactly the longest gap-free prefix of what has arrived.
        let prefix = 0;
        while (delivered.has(prefix + 1)) prefix += 1;
        expect(released).toEqual(range(prefix));
        expect(mailbox.count).toBe(prefix);
        expect(mailbox.hasReady).toBe(taken.length < prefix);
        if (takeAfter) {
          turn += 1;
          taken.push(...mailbox.take(turn));
          expect(taken.map((message) => message.seq)).toEqual(range(prefix));
          expect(mailbox.hasReady).toBe(false);
        }
      });
      taken.push(...mailbox.take(turn + 1));
      expect(taken).toEqual(range(n).map(messageOf));
      expect(mailbox.take(turn + 2)).toEqual([]);
      expect(mailbox.view().map((entry) => entry.seq)).toEqual(range(n));
      expect(mailbox.view().every((entry) => entry.consumedInTurn !== undefined)).toBe(true);
      // A late redelivery after everything was taken is still dropped.
      expect(mailbox.accept(messageOf(1 + (deliveries.length % n)))).toEqual([]);
      expect(restore(mailbox).accept(messageOf(n))).toEqual([]);
    }),
    propertyParameters(300),
  );
});

test('a snapshot taken at any point resumes to the same releases as the mailbox that was not interrupted', () => {
  fc.assert(
    fc.property(streamArbitrary, fc.nat(), ({ deliveries }, cut) => {
      const at = cut % (deliveries.length + 1);
      const original = new Mailbox();
      for (const seq of deliveries.slice(0, at)) original.accept(messageOf(seq));
      const resumed = restore(original);
      expect(resumed.snapshot()).toEqual(original.snapshot());
      const rest = deliveries.slice(at);
      expect(rest.map((seq) => resumed.accept(messageOf(seq)))).toEqual(
        rest.map((seq) => original.accept(messageOf(seq))),
      );
      expect(resumed.take(1)).toEqual(original.take(1));
      expect(resumed.snapshot()).toEqual(original.snapshot());
    }),
    propertyParameters(300),
  );
});
