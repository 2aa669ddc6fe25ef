import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { kitErrorOf, newRun, scopeOf, spawn } from '../helpers/run-state';

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
