import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { RootRunState, RunSnapshot } from '../../domain/run-state';
import { durableSnapshot, kitErrorOf, newRun, now, restored, scopeOf, spawn } from '../helpers/run-state';
import { message, outcome } from './run-state-events';

// The façade's snapshot: what crosses continue-as-new. Each concern has its own run-*.test.ts.

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
      expect(message(run, a1.id, state.rootId).seq).toBe(2);
      expect(run.takeRootMessages(scopeOf(run)).map((sent) => sent.content)).toEqual([
        'pending for the root',
        'hello',
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
