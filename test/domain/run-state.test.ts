import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId, type ThreadId } from '../../domain/ids';
import { maxWaitingBytes, maxWaitingMessages, RootRunState, RunSnapshot } from '../../domain/run-state';
import type { TurnOutcome } from '../../domain/schemas';
import { durableSnapshot, kitErrorOf, newRun, now, restored, scopeOf, spawn } from '../helpers/run-state';

const outcome = (turn: number, tokens = 0): TurnOutcome => ({
  turn,
  status: 'completed',
  result: `turn ${turn} done`,
  tokens,
  endedAt: now,
});

const message = (state: RootRunState, from: string, to: string, content = 'hello', triggerTurn = false) =>
  state.prepareMessage(
    scopeOf(state, from),
    { recipient: to, content, triggerTurn },
    newId('message', randomUUID),
    now,
  );

describe('admission (SPEC S4.1)', () => {
  test('a spawn gets a canonical path, depth, parent, fresh status and its own conversation', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'research', name: 'researcher' });
    const grandchild = spawn(state, child.id, { task: 'read', name: 'reader' });
    expect(child).toMatchObject({ parentId: state.rootId, rootId: state.rootId, path: '/root/researcher' });
    expect(grandchild).toMatchObject({ parentId: child.id, depth: 2, path: '/root/researcher/reader' });
    expect(grandchild).toMatchObject({ status: 'pending', turnsStarted: 0, turnsCompleted: 0 });
    expect(grandchild.conversationId).toBe(grandchild.id.replace('thread_', 'conversation_'));
    expect(state.counters).toEqual({ live: 2, total: 2, tokens: 0 });
  });

  test('the same request id returns the same thread without counting it again', () => {
    const state = newRun();
    const requestId = newId('request', randomUUID);
    const request = { task: 'research', requestId };
    const first = state.admit(scopeOf(state), request, {
      threadId: newId('thread', randomUUID),
      taskQueue: 'q',
      now,
    });
    const again = state.admit(
      scopeOf(state),
      { ...request, fork: { type: 'none' } },
      {
        threadId: newId('thread', randomUUID),
        taskQueue: 'q',
        now,
      },
    );
    expect(first.existing).toBe(false);
    expect(again.existing).toBe(true);
    expect(again.record.thread.id).toBe(first.record.thread.id);
    expect(state.counters).toEqual({ live: 1, total: 1, tokens: 0 });
  });

  test('request-id idempotency is checked before closed admission, revocation and quotas', () => {
    const state = newRun({ maxTotal: 1 });
    const requestId = newId('request', randomUUID);
    const first = spawn(state, state.rootId, { task: 'research', requestId });
    state.revokeGrant(scopeOf(state));
    state.closeAdmission();
    expect(spawn(state, state.rootId, { task: 'research', requestId }).id).toBe(first.id);
    expect(kitErrorOf(() => spawn(state, state.rootId, { task: 'other', requestId })).kind).toBe(
      ErrorKind.Conflict,
    );
  });

  test('the same request id with a different body or from a different caller is a Conflict', () => {
    const state = newRun();
    const requestId = newId('request', randomUUID);
    const first = spawn(state, state.rootId, { task: 'research', name: 'a', requestId });
    const conflict = kitErrorOf(() => spawn(state, state.rootId, { task: 'research', name: 'b', requestId }));
    expect(conflict.kind).toBe(ErrorKind.Conflict);
    expect(conflict.message).toContain(requestId);
    expect(conflict.details).toEqual({ requestId, threadId: first.id });
    expect(kitErrorOf(() => spawn(state, first.id, { task: 'research', name: 'a', requestId })).kind).toBe(
      ErrorKind.Conflict,
    );
    expect(state.counters.total).toBe(1);
  });

  test('a closed run refuses spawns with Closed, before checking the grant', () => {
    const state = newRun();
    state.revokeGrant(scopeOf(state));
    state.closeAdmission();
    expect(state.isAdmissionOpen).toBe(false);
    const error = kitErrorOf(() => spawn(state, state.rootId));
    expect(error.kind).toBe(ErrorKind.Closed);
    expect(error.message).toContain('shut down');
  });

  test('a revoked grant refuses spawns with PermissionDenied, before quotas', () => {
    const state = newRun({ maxTotal: 1 });
    spawn(state, state.rootId);
    state.revokeGrant(scopeOf(state));
    expect(state.grant.revoked).toBe(true);
    const error = kitErrorOf(() => spawn(state, state.rootId));
    expect(error.kind).toBe(ErrorKind.PermissionDenied);
    expect(error.message).toContain('revoked');
  });

  test('only the root may revoke the grant', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    expect(kitErrorOf(() => state.revokeGrant(scopeOf(state, child.id))).kind).toBe(
      ErrorKind.PermissionDenied,
    );
    expect(state.grant.revoked).toBe(false);
    spawn(state, child.id);
  });

  test('a terminal thread cannot spawn', () => {
    const state = newRun();
    const child = spawn(state, state.rootId, { task: 'x', name: 'done' });
    state.threadEnded(child.id, 'completed', now, true);
    const error = kitErrorOf(() => spawn(state, child.id));
    expect(error.kind).toBe(ErrorKind.Closed);
    expect(error.message).toContain('/root/done');
  });

  test('maxDepth: a thread at the deepest level cannot spawn', () => {
    const state = newRun({ maxDepth: 2 });
    const a = spawn(state, state.rootId, { task: 'x', name: 'a' });
    const b = spawn(state, a.id, { task: 'x', name: 'b' });
    const error = kitErrorOf(() => spawn(state, b.id));
    expect(error.kind).toBe(ErrorKind.QuotaExceeded);
    expect(error.message).toBe('maxDepth 2 reached: thread /root/a/b cannot spawn');
    expect(error.details).toEqual({ limit: 'maxDepth', value: 2 });
  });

  test('maxDepth 0 lets the root spawn nothing', () => {
    const state = newRun({ maxDepth: 0 });
    expect(kitErrorOf(() => spawn(state, state.rootId)).details).toEqual({ limit: 'maxDepth', value: 0 });
  });

  test('maxConcurrent counts live threads of the whole run, and an ended thread frees its slot', () => {
    const state = newRun({ maxConcurrent: 2 });
    const a = spawn(state, state.rootId);
    spawn(state, a.id);
    const error = kitErrorOf(() => spawn(state, state.rootId));
    expect(error.kind).toBe(ErrorKind.QuotaExceeded);
    expect(error.message).toBe('maxConcurrent 2 reached in root run: 2 threads are live');
    expect(error.details).toEqual({ limit: 'maxConcurrent', value: 2 });
    state.threadEnded(a.id, 'cancelled', now, true);
    spawn(state, state.rootId);
  });

  test('maxTotal counts lifetime spawns: ending threads does not free it', () => {
    const state = newRun({ maxTotal: 2 });
    state.threadEnded(spawn(state, state.rootId).id, 'completed', now, true);
    state.threadEnded(spawn(state, state.rootId).id, 'failed', now, true);
    const error = kitErrorOf(() => spawn(state, state.rootId));
    expect(error.kind).toBe(ErrorKind.QuotaExceeded);
    expect(error.message).toBe('maxTotal 2 reached in root run: no more spawns in its lifetime');
    expect(error.details).toEqual({ limit: 'maxTotal', value: 2 });
    expect(state.counters).toEqual({ live: 0, total: 2, tokens: 0 });
  });

  test('the token budget counts what the grant already spent and every turn of the tree', () => {
    const spent = newRun({ budgetTokens: 100, spentTokens: 100 });
    expect(kitErrorOf(() => spawn(spent, spent.rootId)).details).toEqual({
      limit: 'budgetTokens',
      value: 100,
    });

    const state = newRun({ budgetTokens: 100 });
    const child = spawn(state, state.rootId);
    state.turnEnded(child.id, outcome(1, 99), 'idle');
    spawn(state, state.rootId);
    state.turnEnded(child.id, outcome(2, 1), 'idle');
    const error = kitErrorOf(() => spawn(state, state.rootId));
    expect(error.kind).toBe(ErrorKind.QuotaExceeded);
    expect(error.message).toBe('token budget 100 exhausted in root run');
    expect(kitErrorOf(() => spawn(state, child.id)).message).toBe(
      'token budget 100 exhausted in subtree /root/agent-1',
    );
    expect(error.details).toEqual({ limit: 'budgetTokens', value: 100 });
  });

  test('narrower child limits apply to its subtree only, and the messages name the subtree', () => {
    const state = newRun({ maxConcurrent: 10, maxTotal: 10, maxDepth: 5, budgetTokens: 1000 });
    const lead = spawn(state, state.rootId, {
      task: 'x',
      name: 'lead',
      limits: { maxConcurrent: 1, maxTotal: 2, maxDepth: 1, budgetTokens: 50 },
    });
    expect(state.record(lead.id)!.limits).toEqual({
      maxConcurrent: 1,
      maxTotal: 2,
      maxDepth: 2,
      budgetTokens: 50,
    });
    const worker = spawn(state, lead.id, { task: 'x', name: 'worker' });
    expect(kitErrorOf(() => spawn(state, lead.id)).message).toBe(
      'maxConcurrent 1 reached in subtree /root/lead: 1 threads are live',
    );
    expect(kitErrorOf(() => spawn(state, worker.id)).message).toBe(
      'maxDepth 2 reached: thread /root/lead/worker cannot spawn',
    );
    state.threadEnded(worker.id, 'completed', now, true);
    spawn(state, lead.id);
    state.threadEnded(state.list(scopeOf(state, lead.id))[2]!.id, 'completed', now, true);
    expect(kitErrorOf(() => spawn(state, lead.id)).message).toBe(
      'maxTotal 2 reached in subtree /root/lead: no more spawns in its lifetime',
    );
    // The rest of the run still has room.
    spawn(state, state.rootId);
    spawn(state, state.rootId);

    const thrifty = spawn(state, state.rootId, { task: 'x', name: 'thrifty', limits: { budgetTokens: 10 } });
    state.turnEnded(thrifty.id, outcome(1, 10), 'idle');
    expect(kitErrorOf(() => spawn(state, thrifty.id)).message).toBe(
      'token budget 10 exhausted in subtree /root/thrifty',
    );
    spawn(state, state.rootId);
  });

  test('a child cannot widen its limits beyond its parent', () => {
    const state = newRun({ maxConcurrent: 3, maxTotal: 5, maxDepth: 2, budgetTokens: 100 });
    const child = spawn(state, state.rootId, {
      task: 'x',
      limits: { maxConcurrent: 100, maxTotal: 100, maxDepth: 10, budgetTokens: 10_000 },
    });
    expect(state.record(child.id)!.limits).toEqual({
      maxConcurrent: 3,
      maxTotal: 5,
      maxDepth: 2,
      budgetTokens: 100,
    });
  });

  test('an explicit name already used by a live sibling is a Conflict; other parents and ended siblings are fine', () => {
    const state = newRun();
    const first = spawn(state, state.rootId, { task: 'x', name: 'scout' });
    const error = kitErrorOf(() => spawn(state, state.rootId, { task: 'y', name: 'scout' }));
    expect(error.kind).toBe(ErrorKind.Conflict);
    expect(error.message).toBe('/root already has a live child named scout');
    expect(state.counters.total).toBe(1);
    expect(spawn(state, first.id, { task: 'y', name: 'scout' }).path).toBe('/root/scout/scout');
    state.threadEnded(first.id, 'completed', now, true);
    expect(spawn(state, state.rootId, { task: 'y', name: 'scout' }).path).toBe('/root/scout');
  });

  test('a spawn without a name never conflicts, even with a sibling explicitly named like a generated name', () => {
    const state = newRun();
    spawn(state, state.rootId, { task: 'x', name: 'agent-2' });
    const unnamed = spawn(state, state.rootId, { task: 'y' });
    expect(unnamed.name).not.toBe('agent-2');
    expect(unnamed.path).toBe(`/root/${unnamed.name}`);
    expect(state.counters.total).toBe(2);
  });

  test('a child gets the intersection of the tools it asks for and its parent’s, or its parent’s', () => {
    const state = newRun({}, { tools: ['search', 'read'] });
    expect(spawn(state, state.rootId, { task: 'x', tools: ['read', 'write'] }).tools).toEqual(['read']);
    expect(spawn(state, state.rootId, { task: 'x', tools: ['*'] }).tools).toEqual([]);
    const inheriting = spawn(state, state.rootId, { task: 'x' });
    expect(inheriting.tools).toEqual(['search', 'read']);
    expect(spawn(state, inheriting.id, { task: 'x', tools: ['search', 'shell'] }).tools).toEqual(['search']);

    const open = newRun({}, { tools: ['*'] });
    expect(spawn(open, open.rootId, { task: 'x', tools: ['shell', '*'] }).tools).toEqual(['shell', '*']);
  });

  test('malformed requests and scopes are Protocol errors that change nothing', () => {
    const state = newRun();
    const before = durableSnapshot(state);
    const placement = { threadId: newId('thread', randomUUID), taskQueue: 'q', now };
    for (const request of [
      {},
      { task: '' },
      { task: 'x', requestId: 'request_1' },
      { task: 'x', name: 'Bad Name' },
    ]) {
      expect(kitErrorOf(() => state.admit(scopeOf(state), request, placement)).kind).toBe(ErrorKind.Protocol);
    }
    expect(
      kitErrorOf(() =>
        state.admit({ rootId: state.rootId, threadId: 'thread_x' as never }, { task: 'x' }, placement),
      ).kind,
    ).toBe(ErrorKind.Protocol);
    expect(durableSnapshot(state)).toEqual(before);
  });

  test('quota rejections change nothing', () => {
    const state = newRun({ maxConcurrent: 1 });
    spawn(state, state.rootId, { task: 'x', requestId: newId('request', randomUUID) });
    const before = durableSnapshot(state);
    const requestId = newId('request', randomUUID);
    expect(kitErrorOf(() => spawn(state, state.rootId, { task: 'x', requestId })).kind).toBe(
      ErrorKind.QuotaExceeded,
    );
    expect(durableSnapshot(state)).toEqual(before);
  });
});

describe('scope (SPEC S4.4)', () => {
  test('a caller from another run or an unknown thread is PermissionDenied', () => {
    const state = newRun();
    const other = newRun();
    const otherChild = spawn(other, other.rootId);
    expect(kitErrorOf(() => state.caller(scopeOf(other))).kind).toBe(ErrorKind.PermissionDenied);
    expect(kitErrorOf(() => state.list({ rootId: state.rootId, threadId: otherChild.id })).kind).toBe(
      ErrorKind.PermissionDenied,
    );
    expect(kitErrorOf(() => spawn(state, otherChild.id)).kind).toBe(ErrorKind.PermissionDenied);
    expect(state.counters.total).toBe(0);
  });

  test('load returns threads in the caller’s subtree and null for everything else', () => {
    const state = newRun();
    const a = spawn(state, state.rootId, { task: 'x', name: 'a' });
    const a1 = spawn(state, a.id, { task: 'x', name: 'a1' });
    const b = spawn(state, state.rootId, { task: 'x', name: 'b' });
    const scopeA = scopeOf(state, a.id);
    expect(state.load(scopeA, a.id)?.path).toBe('/root/a');
    expect(state.load(scopeA, a1.id)?.path).toBe('/root/a/a1');
    expect(state.load(scopeA, b.id)).toBeNull();
    expect(state.load(scopeA, state.rootId)).toBeNull();
    expect(state.load(scopeA, newId('thread', randomUUID))).toBeNull();
    expect(state.load(scopeOf(state), a1.id)?.id).toBe(a1.id);
  });

  test('load of a malformed id is a Protocol error naming the field', () => {
    const state = newRun();
    const error = kitErrorOf(() => state.load(scopeOf(state), 'thread_nope'));
    expect(error.kind).toBe(ErrorKind.Protocol);
    expect(error.message).toContain('threadId');
  });

  test('list returns the caller first, then its subtree in spawn order', () => {
    const state = newRun();
    const a = spawn(state, state.rootId, { task: 'x', name: 'a' });
    spawn(state, state.rootId, { task: 'x', name: 'b' });
    spawn(state, a.id, { task: 'x', name: 'a1' });
    spawn(state, a.id, { task: 'x', name: 'a2' });
    expect(state.list(scopeOf(state, a.id)).map((thread) => thread.path)).toEqual([
      '/root/a',
      '/root/a/a1',
      '/root/a/a2',
    ]);
    expect(state.list(scopeOf(state)).map((thread) => thread.path)).toEqual([
      '/root',
      '/root/a',
      '/root/b',
      '/root/a/a1',
      '/root/a/a2',
    ]);
  });
});

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

describe('lifecycle events', () => {
  test('turnStarted marks the thread running and ignores stale turns, terminal and unknown threads', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    state.turnStarted(child.id, 1, '2030-01-01T00:00:01.000Z');
    expect(state.record(child.id)!.thread).toMatchObject({ status: 'running', turnsStarted: 1 });
    state.turnEnded(child.id, outcome(1), 'idle');
    state.turnStarted(child.id, 1, '2030-01-01T00:00:02.000Z');
    expect(state.record(child.id)!.thread).toMatchObject({ status: 'idle', turnsStarted: 1 });
    state.threadEnded(child.id, 'completed', now, true);
    state.turnStarted(child.id, 2, now);
    expect(state.record(child.id)!.thread).toMatchObject({ status: 'completed', turnsStarted: 1 });
    const before = durableSnapshot(state);
    state.turnStarted(newId('thread', randomUUID), 1, now);
    expect(durableSnapshot(state)).toEqual(before);
  });

  test('turnEnded records the outcome, keeps the first turn, and charges tokens to every ancestor', () => {
    const state = newRun({ spentTokens: 5 });
    const a = spawn(state, state.rootId);
    const a1 = spawn(state, a.id);
    const b = spawn(state, state.rootId);
    state.turnEnded(a1.id, outcome(1, 10), 'idle');
    state.turnEnded(a1.id, outcome(2, 7), 'running');
    state.turnEnded(a.id, outcome(1, 3), 'idle');
    expect(state.record(a1.id)!.thread).toMatchObject({
      status: 'running',
      turnsCompleted: 2,
      turnsStarted: 2,
      firstTurn: outcome(1, 10),
      latestTurn: outcome(2, 7),
    });
    expect(state.record(a1.id)!.subtreeTokens).toBe(17);
    expect(state.record(a.id)!.subtreeTokens).toBe(20);
    expect(state.record(b.id)!.subtreeTokens).toBe(0);
    expect(state.counters.tokens).toBe(25);
  });

  test('turnEnded ignores stale turns and terminal threads: no tokens are charged twice', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    state.turnEnded(child.id, outcome(1, 10), 'idle');
    state.turnEnded(child.id, outcome(1, 10), 'running');
    expect(state.record(child.id)!.thread.status).toBe('idle');
    expect(state.counters.tokens).toBe(10);
    state.threadEnded(child.id, 'failed', now, true);
    state.turnEnded(child.id, outcome(2, 10), 'idle');
    expect(state.record(child.id)!.thread).toMatchObject({ status: 'failed', turnsCompleted: 1 });
    expect(state.counters.tokens).toBe(10);
  });

  test('threadEnded frees a live slot in every ancestor, keeps lifetime totals, and counts once', () => {
    const state = newRun();
    const a = spawn(state, state.rootId);
    const a1 = spawn(state, a.id);
    const a11 = spawn(state, a1.id);
    state.threadEnded(a11.id, 'cancelled', now, true);
    state.threadEnded(a11.id, 'completed', now, true);
    expect(state.record(a11.id)!.thread.status).toBe('cancelled');
    expect([a1, a].map((thread) => state.record(thread.id)!.subtreeLive)).toEqual([0, 1]);
    expect([a1, a].map((thread) => state.record(thread.id)!.subtreeTotal)).toEqual([1, 2]);
    expect(state.counters).toEqual({ live: 2, total: 3, tokens: 0 });
  });

  test('threadEnded with a non-terminal status is ignored', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    state.threadEnded(child.id, 'idle', now, true);
    expect(state.record(child.id)!.thread.status).toBe('pending');
    expect(state.counters.live).toBe(1);
  });

  test('turnRequested wakes only an idle thread', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    state.turnRequested(child.id);
    expect(state.record(child.id)!.thread.status).toBe('pending');
    state.turnEnded(child.id, outcome(1), 'idle');
    state.turnRequested(child.id);
    expect(state.record(child.id)!.thread.status).toBe('running');
  });
});

describe('snapshot', () => {
  const busyRun = () => {
    const state = newRun({ maxConcurrent: 3, maxTotal: 10, budgetTokens: 100 });
    const requestId = newId('request', randomUUID);
    const a = spawn(state, state.rootId, { task: 'x', name: 'a', requestId });
    const a1 = spawn(state, a.id, { task: 'x', name: 'a1' });
    const b = spawn(state, state.rootId, { task: 'x', name: 'b' });
    state.threadEnded(b.id, 'completed', now, true);
    state.turnEnded(a1.id, outcome(1, 30), 'idle');
    message(state, a.id, state.rootId, 'pending for the root');
    message(state, state.rootId, a1.id);
    return { state, requestId, a, a1 };
  };

  test('a snapshot parses with the RunSnapshot schema and survives JSON unchanged', () => {
    const { state } = busyRun();
    const snapshot = state.snapshot();
    expect(RunSnapshot.parse(snapshot)).toEqual(snapshot);
    expect(durableSnapshot(state)).toEqual(snapshot);
  });

  test('a restored run behaves like the original', () => {
    const { state, requestId, a, a1 } = busyRun();
    const copy = restored(state);
    expect(copy.snapshot()).toEqual(state.snapshot());
    for (const run of [state, copy]) {
      expect(run.counters).toEqual({ live: 2, total: 3, tokens: 30 });
      expect(spawn(run, state.rootId, { task: 'x', name: 'a', requestId }).id).toBe(a.id);
      expect(message(run, state.rootId, a1.id).seq).toBe(2);
      expect(run.takeRootMessages(scopeOf(run)).map((sent) => sent.content)).toEqual([
        'pending for the root',
      ]);
      spawn(run, state.rootId, { task: 'x', name: 'c', limits: { maxTotal: 1 } });
      expect(kitErrorOf(() => spawn(run, state.rootId)).details).toEqual({
        limit: 'maxConcurrent',
        value: 3,
      });
    }
    const closed = busyRun().state;
    closed.revokeGrant(scopeOf(closed));
    expect(kitErrorOf(() => spawn(restored(closed), closed.rootId)).kind).toBe(ErrorKind.PermissionDenied);
    closed.closeAdmission();
    expect(kitErrorOf(() => spawn(restored(closed), closed.rootId)).kind).toBe(ErrorKind.Closed);
  });

  test('a snapshot is detached: changing the run afterwards changes neither it nor a run built from it', () => {
    const { state, a } = busyRun();
    const snapshot = state.snapshot();
    const frozen = JSON.stringify(snapshot);
    const copy = new RootRunState(snapshot);
    spawn(state, a.id);
    state.turnEnded(a.id, outcome(1, 5), 'idle');
    expect(JSON.stringify(snapshot)).toBe(frozen);
    expect(copy.counters).toEqual({ live: 2, total: 3, tokens: 30 });
    spawn(copy, state.rootId);
    expect(state.counters).toEqual({ live: 3, total: 4, tokens: 35 });
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
    expect(refused.message).toMatch(/5000 messages waiting for its next turn/);
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
