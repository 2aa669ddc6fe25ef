import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId, type ThreadId } from '../../domain/ids';
import { maxWaitingBytes, maxWaitingMessages, RootRunState } from '../../domain/run-state';
import { durableSnapshot, kitErrorOf, newRun, now, restored, scopeOf, spawn } from '../helpers/run-state';
import { message } from './run-state-events';

describe('messages (SPEC S4.3, S3.7)', () => {
  const family = () => {
    const state = newRun();
    const a = spawn(state, state.rootId, { task: 'x', name: 'a' });
    const a1 = spawn(state, a.id, { task: 'x', name: 'a1' });
    const b = spawn(state, state.rootId, { task: 'x', name: 'b' });
    const b1 = spawn(state, b.id, { task: 'x', name: 'b1' });
    return { state, a, a1, b, b1 };
  };

  test('a thread may message its ancestors and descendants; the root may message anyone', () => {
    const { state, a, a1, b1 } = family();
    expect(message(state, a1.id, a.id).recipient).toBe(a.id);
    expect(message(state, a1.id, state.rootId).recipient).toBe(state.rootId);
    expect(message(state, a.id, a1.id).sender).toBe(a.id);
    expect(message(state, state.rootId, b1.id).recipient).toBe(b1.id);
  });

  test('siblings, cousins, self and unknown recipients are PermissionDenied, with the same message', () => {
    const { state, a, a1, b, b1 } = family();
    const before = durableSnapshot(state);
    for (const [from, to] of [
      [a.id, b.id],
      [a1.id, b1.id],
      [a1.id, b.id],
      [a.id, a.id],
      [state.rootId, state.rootId],
    ] as const) {
      const error = kitErrorOf(() => message(state, from, to));
      expect(error.kind).toBe(ErrorKind.PermissionDenied);
      expect(error.message).toContain('may only message its ancestors and descendants');
    }
    const unknown = newId('thread', randomUUID);
    expect(kitErrorOf(() => message(state, a.id, unknown)).message).toBe(
      `thread /root/a may only message its ancestors and descendants, not ${unknown}`,
    );
    expect(kitErrorOf(() => message(state, a.id, 'thread_bad')).kind).toBe(ErrorKind.Protocol);
    expect(durableSnapshot(state)).toEqual(before);
  });

  test('a terminal recipient or sender is Closed, and the rejection uses no sequence number', () => {
    const { state, a, a1 } = family();
    expect(message(state, a.id, a1.id).seq).toBe(1);
    state.threadEnded(a1.id, 'completed', now, true);
    const error = kitErrorOf(() => message(state, a.id, a1.id));
    expect(error.kind).toBe(ErrorKind.Closed);
    expect(error.message).toContain('/root/a/a1 is completed');
    expect(kitErrorOf(() => message(state, a1.id, a.id)).kind).toBe(ErrorKind.Closed);
    expect(message(state, state.rootId, a.id).seq).toBe(1);
  });

  test('each recipient has its own sequence, whoever sends', () => {
    const { state, a, a1, b } = family();
    const seqs = [
      message(state, state.rootId, a.id),
      message(state, a1.id, a.id),
      message(state, state.rootId, b.id),
      message(state, a1.id, a.id),
      message(state, a.id, a1.id),
    ].map((sent) => [sent.recipient, sent.seq]);
    expect(seqs).toEqual([
      [a.id, 1],
      [a.id, 2],
      [b.id, 1],
      [a.id, 3],
      [a1.id, 1],
    ]);
  });

  test('a message carries host-assigned identity and the body untouched', () => {
    const { state, a } = family();
    const id = newId('message', randomUUID);
    const sent = state.prepareMessage(
      scopeOf(state, a.id),
      { recipient: state.rootId, content: 'done' },
      id,
      now,
    );
    expect(sent).toEqual({
      id,
      sender: a.id,
      recipient: state.rootId,
      seq: 1,
      content: 'done',
      triggerTurn: false,
      sentAt: now,
    });
  });

  test('the root mailbox holds only messages to the root, is drained in order once, and only by the root', () => {
    const { state, a, a1, b } = family();
    const first = message(state, a.id, state.rootId, 'one');
    message(state, state.rootId, b.id, 'not for the root');
    const second = message(state, a1.id, state.rootId, 'two');
    expect(kitErrorOf(() => state.takeRootMessages(scopeOf(state, a.id))).kind).toBe(
      ErrorKind.PermissionDenied,
    );
    expect(state.pendingRootMessages()).toEqual([first, second]);
    expect(state.takeRootMessages(scopeOf(state))).toEqual([first, second]);
    expect(state.takeRootMessages(scopeOf(state))).toEqual([]);
    const third = message(state, b.id, state.rootId, 'three');
    expect(third.seq).toBe(3);
    expect(state.takeRootMessages(scopeOf(state))).toEqual([third]);
  });
});

describe('mailbox back-pressure', () => {
  /** Sends from `senderId` (the root by default) to `recipient` in `state`. */
  const sender =
    (state: RootRunState, recipient: string, senderId: string = state.rootId) =>
    (content = 'x') =>
      state.prepareMessage(
        scopeOf(state, senderId),
        { recipient: recipient as ThreadId, content },
        newId('message', randomUUID),
        now,
      );

  test('a recipient with maxWaitingMessages unconsumed refuses more (QuotaExceeded) until a turn consumes them', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'collect' });
    const send = sender(state, child.id);
    for (let index = 0; index < maxWaitingMessages; index++) send();
    const refused = kitErrorOf(send);
    expect(refused.kind).toBe(ErrorKind.QuotaExceeded);
    expect(refused.message).toMatch(`${maxWaitingMessages} messages waiting for its next turn`);
    expect(state.snapshot().recipientSeq[child.id]).toBe(maxWaitingMessages);
    state.turnStarted(child.id, 2, now, { seq: maxWaitingMessages });
    expect(send().seq).toBe(maxWaitingMessages + 1);
    // The consumed mark survives continue-as-new.
    expect(restored(state).snapshot().consumedSeq[child.id]).toBe(maxWaitingMessages);
  });

  test('a recipient with maxWaitingBytes of content unconsumed refuses more until a turn reports them consumed', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'collect' });
    const send = sender(state, child.id);
    const big = 'é'.repeat(50_000); // 100,000 bytes in UTF-8
    for (let index = 0; index < 5; index++) send(big);
    const refused = kitErrorOf(() => send(big));
    expect(refused.kind).toBe(ErrorKind.QuotaExceeded);
    expect(refused.details).toEqual({ limit: 'waitingBytes', value: maxWaitingBytes });
    expect(refused.message).toMatch(/500000 bytes of messages waiting/);
    expect(state.snapshot().recipientSeq[child.id]).toBe(5);
    send('a short one still fits');
    // The thread's turn took everything through seq 6 (its mailbox counted the bytes); room again.
    state.turnStarted(child.id, 2, now, { seq: 6, bytes: 500_000 + 22 });
    for (let index = 0; index < 5; index++) send(big);
    expect(kitErrorOf(() => send(big)).kind).toBe(ErrorKind.QuotaExceeded);
    // Carried through continue-as-new.
    expect(kitErrorOf(() => sender(restored(state), child.id)(big)).kind).toBe(ErrorKind.QuotaExceeded);
  });

  test('one message of any allowed size is taken when nothing waits, and a thread that reports no bytes frees them by consuming all', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'collect' });
    const send = sender(state, child.id);
    const huge = '✓'.repeat(100_000); // 300,000 bytes
    send(huge);
    send(huge.slice(0, 70_000));
    expect(kitErrorOf(() => send('x'.repeat(20_000))).kind).toBe(ErrorKind.QuotaExceeded);
    state.turnStarted(child.id, 2, now, { seq: 2 }); // an agent on code that does not count bytes
    expect(send(huge).seq).toBe(3);
  });

  test('the root mailbox is bounded by bytes too', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'report' });
    const report = sender(state, state.rootId, child.id);
    for (let index = 0; index < 5; index++) report('r'.repeat(100_000));
    expect(kitErrorOf(() => report('r'.repeat(100_000))).details).toEqual({
      limit: 'waitingBytes',
      value: maxWaitingBytes,
    });
    expect(state.takeRootMessages(scopeOf(state))).toHaveLength(5);
    expect(report('r'.repeat(100_000)).seq).toBe(6);
  });
});
