import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { durableSnapshot, kitErrorOf, newRun, now, scopeOf, spawn } from '../helpers/run-state';

// SPEC S4.1 admission: idempotency per request id, closed runs, revoked grants, and refusals that change
// nothing. Quotas, names and tools a child gets: spawn-limits.test.ts.

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
