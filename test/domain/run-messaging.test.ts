import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { jsonBytes } from '../../domain/bytes';
import { rootMailboxLimits } from '../../domain/mailbox';
import { RootRunState } from '../../domain/run-state';
import { maxMessageBytes } from '../../domain/schemas';
import {
  admitToRoot,
  durableSnapshot,
  kitErrorOf,
  newRun,
  now,
  restored,
  scopeOf,
  spawn,
} from '../helpers/run-state';
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
    expect(message(state, a.id, state.rootId).seq).toBe(1);
    state.threadEnded(a1.id, 'completed', now, true);
    const error = kitErrorOf(() => message(state, a.id, a1.id));
    expect(error.kind).toBe(ErrorKind.Closed);
    expect(error.message).toContain('/root/a/a1 is completed');
    expect(kitErrorOf(() => message(state, a1.id, state.rootId)).kind).toBe(ErrorKind.Closed);
    expect(message(state, a.id, state.rootId).seq).toBe(2);
  });

  test('the root numbers only its own mailbox, whoever sends; other threads number theirs (SPEC S3.1)', () => {
    const { state, a, a1, b } = family();
    const seqs = [a.id, a1.id, b.id].map((from) => message(state, from, state.rootId).seq);
    expect(seqs).toEqual([1, 2, 3]);
    const toChild = kitErrorOf(() =>
      admitToRoot(
        state,
        scopeOf(state),
        { recipient: a.id, content: 'x' },
        newId('message', randomUUID),
        now,
      ),
    );
    expect(toChild.kind).toBe(ErrorKind.InvalidState);
    expect(toChild.message).toContain("send to the recipient's own workflow");
    expect(message(state, a1.id, state.rootId).seq).toBe(4);
  });

  test('a message carries host-assigned identity and the body untouched', () => {
    const { state, a } = family();
    const id = newId('message', randomUUID);
    const sent = admitToRoot(
      state,
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

describe("the root's mailbox back-pressure (SPEC S3.10)", () => {
  /** Sends from thread `senderId` to the root of `state`. */
  const reporter =
    (state: RootRunState, senderId: string) =>
    (content = 'x') =>
      admitToRoot(
        state,
        scopeOf(state, senderId),
        { recipient: state.rootId, content },
        newId('message', randomUUID),
        now,
      );

  test('past rootMailboxLimits.messages waiting, more are QuotaExceeded until the root takes them', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'report' });
    const report = reporter(state, child.id);
    for (let index = 0; index < rootMailboxLimits.messages; index++) report();
    const before = durableSnapshot(state);
    const refused = kitErrorOf(report);
    expect(refused.kind).toBe(ErrorKind.QuotaExceeded);
    expect(refused.message).toMatch(`${rootMailboxLimits.messages} messages waiting for its next turn`);
    expect(durableSnapshot(state)).toEqual(before);
    // Carried through continue-as-new.
    expect(kitErrorOf(reporter(restored(state), child.id)).kind).toBe(ErrorKind.QuotaExceeded);
    expect(state.takeRootMessages(scopeOf(state))).toHaveLength(rootMailboxLimits.messages);
    expect(report().seq).toBe(rootMailboxLimits.messages + 1);
  });

  test('bytes are counted as carried (content as JSON and its envelope); one message is always taken when none waits', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'report' });
    const report = reporter(state, child.id);
    const big = 'é'.repeat((maxMessageBytes - 2) / 2); // 128 KiB as JSON, the most one message may take
    // One message of the most a message may take is admitted when none waits, though its envelope
    // takes it past the limit; then nothing more fits.
    report(big);
    expect(kitErrorOf(() => report('x')).details).toEqual({ limit: 'waitingBytes', value: 128 * 1024 });
    expect(kitErrorOf(() => report(`${big}é`)).kind).toBe(ErrorKind.Protocol);
    expect(state.takeRootMessages(scopeOf(state))).toHaveLength(1);
    report('x');
    expect(kitErrorOf(() => report(big)).kind).toBe(ErrorKind.QuotaExceeded);
    expect(report('y').seq).toBe(3);
    expect(jsonBytes(state.snapshot().rootMailbox.ready)).toBeLessThanOrEqual(rootMailboxLimits.bytes);
  });
});
