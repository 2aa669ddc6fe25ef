import { randomUUID } from 'node:crypto';
import { newId } from '../../domain/ids';
import type { InterAgentMessage } from '../../domain/schemas';
import { checkCounters, checkMessages, checkNotifications, checkRun, type LogEntry } from './checker';
import { durableSnapshot, newRun, now, spawn } from './run-state';

const message = (recipient: string, seq: number, content = `c${seq}`): InterAgentMessage => ({
  id: newId('message', randomUUID),
  sender: newId('thread', randomUUID),
  recipient: recipient as InterAgentMessage['recipient'],
  seq,
  content,
  triggerTurn: false,
  sentAt: now,
});

/** A run with a child and a grandchild, shut down, as a log that keeps every rule. */
function healthyLog(): LogEntry[] {
  const state = newRun();
  const a = spawn(state, state.rootId, { task: 'a', name: 'a' });
  const b = spawn(state, a.id, { task: 'b', name: 'b' });
  const m1 = message(a.id, 1);
  const m2 = message(a.id, 2);
  const running = durableSnapshot(state);
  state.beginShutdown(now);
  for (const thread of [b, a]) state.threadEnded(thread.id, 'cancelled', now, true);
  const report = state.finishShutdown(now);
  return [
    { type: 'spawn', threadId: a.id, requestId: 'q1' },
    { type: 'spawn', threadId: a.id, requestId: 'q1' },
    { type: 'send', recipient: a.id, content: m1.content, message: m1 },
    { type: 'send', recipient: a.id, content: 'uncertain', error: 'Integration' },
    { type: 'send', recipient: a.id, content: m2.content, message: m2 },
    { type: 'mailbox', threadId: a.id, received: [m1, m2] },
    { type: 'receiver-open', session: 1 },
    { type: 'recv', session: 1, seq: 1, id: 'n1', kind: 'status' },
    { type: 'recv', session: 1, seq: 2, id: 'n2', kind: 'interaction', requestId: 'r1' },
    { type: 'recv', session: 1, seq: 3, id: 'n3', kind: 'message' },
    { type: 'receiver-close', session: 1 },
    // Session 2 is offered the item dropped without ack and the still-pending interaction again.
    { type: 'receiver-open', session: 2 },
    { type: 'recv', session: 2, seq: 2, id: 'n2', kind: 'interaction', requestId: 'r1' },
    { type: 'recv', session: 2, seq: 3, id: 'n3', kind: 'message' },
    { type: 'resolved', requestId: 'r1' },
    { type: 'recv', session: 2, seq: 4, id: 'n4', kind: 'message' },
    { type: 'snapshot', snapshot: running },
    { type: 'shutdown', report },
    { type: 'snapshot', snapshot: durableSnapshot(state) },
  ];
}

test('a run that kept every promise passes', () => {
  expect(checkRun(healthyLog())).toEqual([]);
});

test('a lost, a repeated and a reordered message are each reported', () => {
  const log = healthyLog();
  const mailbox = log.find((entry) => entry.type === 'mailbox')!;
  if (mailbox.type !== 'mailbox') throw new Error('no mailbox');
  const [m1, m2] = mailbox.received;
  expect(
    checkMessages(log.map((entry) => (entry === mailbox ? { ...mailbox, received: [m1!] } : entry))),
  ).toEqual([expect.stringMatching(/was lost/)]);
  expect(
    checkMessages(
      log.map((entry) => (entry === mailbox ? { ...mailbox, received: [m1!, m2!, m2!] } : entry)),
    ),
  ).toEqual(expect.arrayContaining([expect.stringMatching(/delivered 2 times/)]));
  expect(
    checkMessages(log.map((entry) => (entry === mailbox ? { ...mailbox, received: [m2!, m1!] } : entry))),
  ).toEqual(expect.arrayContaining([expect.stringMatching(/seq 2 \(lost, repeated or reordered\)/)]));
});

test('counters that disagree with the registry, and a request admitted twice, are reported', () => {
  const log = healthyLog();
  const snapshotEntry = log.find((entry) => entry.type === 'snapshot')!;
  if (snapshotEntry.type !== 'snapshot') throw new Error('no snapshot');
  const skewed = structuredClone(snapshotEntry.snapshot);
  skewed.records[0]!.subtreeLive += 1;
  expect(
    checkCounters(log.map((entry) => (entry === snapshotEntry ? { ...entry, snapshot: skewed } : entry))),
  ).toEqual([expect.stringMatching(/counters live 3\/total 2, registry says 2\/2/)]);
  const twice: LogEntry[] = [
    ...log,
    { type: 'spawn', requestId: 'q1', threadId: newId('thread', randomUUID) },
  ];
  expect(checkCounters(twice)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/admitted twice/),
      expect.stringMatching(/registry 0 times/),
    ]),
  );
});

test('an acknowledged notification repeated, a skipped one and a backwards one are reported', () => {
  const base = healthyLog();
  const repeatedAcked: LogEntry[] = [
    ...base,
    { type: 'receiver-open', session: 3 },
    { type: 'recv', session: 3, seq: 1, id: 'n1', kind: 'status' },
  ];
  expect(checkNotifications(repeatedAcked)).toEqual([
    expect.stringMatching(/acknowledged item 1 \(status\)/),
  ]);
  const resolvedRepeated: LogEntry[] = [
    ...base,
    { type: 'receiver-open', session: 3 },
    { type: 'recv', session: 3, seq: 2, id: 'n2', kind: 'interaction', requestId: 'r1' },
  ];
  expect(checkNotifications(resolvedRepeated)).toEqual([expect.stringMatching(/acknowledged item 2/)]);
  const skipped: LogEntry[] = [...base, { type: 'recv', session: 2, seq: 6, id: 'n6', kind: 'message' }];
  expect(checkNotifications(skipped)).toEqual([expect.stringMatching(/seqs 5..5 were skipped/)]);
  const backwards: LogEntry[] = [...base, { type: 'recv', session: 2, seq: 3, id: 'n3', kind: 'message' }];
  expect(checkNotifications(backwards)).toEqual(
    expect.arrayContaining([expect.stringMatching(/not strictly increasing/)]),
  );
});

test('a shutdown that reports failures, or leaves a thread alive, is reported', () => {
  const log = healthyLog();
  const shutdown = log.find((entry) => entry.type === 'shutdown')!;
  if (shutdown.type !== 'shutdown') throw new Error('no shutdown');
  const failing = log.map((entry) =>
    entry === shutdown
      ? { ...shutdown, report: { ...shutdown.report, unconfirmed: [shutdown.report.cancelled[0]!] } }
      : entry,
  );
  expect(checkRun(failing)).toEqual([expect.stringMatching(/unconfirmed threads/)]);
  expect(checkRun(log.filter((entry) => entry.type !== 'shutdown'))).toEqual(['the run was not shut down']);
});
