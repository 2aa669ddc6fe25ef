import { randomUUID } from 'node:crypto';
import { newId } from '../../domain/ids';
import { durableSnapshot, newRun, now, spawn } from '../helpers/run-state';
import { outcome } from './run-state-events';

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
