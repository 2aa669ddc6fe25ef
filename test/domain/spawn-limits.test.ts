import { ErrorKind } from '../../domain/errors';
import { kitErrorOf, newRun, now, scopeOf, spawn } from '../helpers/run-state';
import { outcome } from './run-state-events';

// SPEC S4.1 quotas of every subtree on the way up, the limits, name and tools a child gets.

describe('admission (SPEC S4.1)', () => {
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
});
