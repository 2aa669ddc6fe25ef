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

describe('budgets in US dollars (SPEC S11.3)', () => {
  const scope = (state: ReturnType<typeof newRun>, threadId: string) => scopeOf(state, threadId);

  test('a grant in dollars is kept in micro-dollars; a child narrows it, never widens it', () => {
    const state = newRun({ budgetUsd: 2.5 });
    expect(state.record(state.rootId)!.limits.budgetMicroUsd).toBe(2_500_000);
    const narrow = spawn(state, state.rootId, { task: 'x', name: 'narrow', limits: { budgetUsd: 0.25 } });
    const wide = spawn(state, state.rootId, { task: 'x', name: 'wide', limits: { budgetUsd: 100 } });
    expect(state.record(narrow.id)!.limits.budgetMicroUsd).toBe(250_000);
    expect(state.record(wide.id)!.limits.budgetMicroUsd).toBe(2_500_000);
    expect(state.hasDollarBudget(narrow.id)).toBe(true);
    // Without one in the grant, a child may still set its own: only its subtree has it.
    const free = newRun();
    const own = spawn(free, free.rootId, { task: 'x', name: 'own', limits: { budgetUsd: 1 } });
    expect(free.hasDollarBudget(free.rootId)).toBe(false);
    expect(free.record(free.rootId)!.limits.budgetMicroUsd).toBeUndefined();
    expect(free.record(own.id)!.limits.budgetMicroUsd).toBe(1_000_000);
  });

  test('an allowance in micro-dollars counts as used until spent or given back, and a spent budget refuses', () => {
    const state = newRun({ budgetUsd: 1 });
    const child = spawn(state, state.rootId, { task: 'x', name: 'spender', limits: { budgetUsd: 0.4 } });
    // A quarter of the least budget left on the way up at most.
    const first = state.reserve(scope(state, child.id), {
      tokens: 200_000,
      owed: 0,
      spent: 0,
      unit: 'microUsd',
    });
    expect(first.granted).toBe(100_000);
    expect(state.record(child.id)!.heldMicroUsd).toBe(100_000);
    expect(state.record(state.rootId)!.subtreeMicroUsd).toBe(100_000);
    // Tokens are a budget of their own.
    expect(state.record(child.id)!.subtreeTokens).toBe(0);
    // It spent 60,000 and 350,000 more than it held: owed is charged first, and the budget is used up.
    const error = kitErrorOf(() =>
      state.reserve(scope(state, child.id), {
        tokens: 200_000,
        owed: 350_000,
        spent: 60_000,
        unit: 'microUsd',
      }),
    );
    expect(error.kind).toBe(ErrorKind.QuotaExceeded);
    expect(error.message).toBe('dollar budget $0.400000 exhausted in subtree /root/spender: $0.450000 used');
    expect(error.details).toEqual({ limit: 'budgetUsd', value: 0.4 });
    expect(kitErrorOf(() => spawn(state, child.id)).details).toEqual({ limit: 'budgetUsd', value: 0.4 });
    // The root has room: it spawns; its ended child gives back what it held and did not use.
    spawn(state, state.rootId);
    state.refund(child.id, 40_000, 'microUsd');
    expect(state.record(state.rootId)!.subtreeMicroUsd).toBe(410_000);
    expect(state.record(child.id)!.heldMicroUsd).toBe(0);
  });

  test('a thread refused a call gives back what it holds, even when a budget above is used up', () => {
    const state = newRun({ budgetUsd: 1 });
    const a = spawn(state, state.rootId, { task: 'x', name: 'a' });
    const b = spawn(state, state.rootId, { task: 'x', name: 'b' });
    state.reserve(scope(state, a.id), { tokens: 250_000, owed: 0, spent: 0, unit: 'microUsd' });
    // b spends past everything: the tree's budget is used up.
    expect(() =>
      state.reserve(scope(state, b.id), { tokens: 0, owed: 900_000, spent: 0, unit: 'microUsd' }),
    ).toThrow(/dollar budget/);
    // a gives back its 250,000 (it spent 50,000 of them): taken, never refused.
    const given = state.reserve(scope(state, a.id), {
      tokens: 0,
      owed: 0,
      spent: 50_000,
      giveBack: 200_000,
      unit: 'microUsd',
    });
    expect(given.granted).toBe(0);
    expect(state.record(a.id)!.heldMicroUsd).toBe(0);
    expect(state.record(state.rootId)!.subtreeMicroUsd).toBe(950_000);
  });

  test("the root's own call is held before it starts and settled at what it cost", () => {
    const state = newRun({ budgetUsd: 0.01 });
    const root = scope(state, state.rootId);
    state.reserveCall(root, 8_000, 'microUsd');
    const refused = kitErrorOf(() => state.reserveCall(root, 2_001, 'microUsd'));
    expect(refused.message).toBe(
      "the dollar budget has no room for another model call: it may cost $0.002001 (its maximum output and its input's estimate at the worker's prices), and $0.002000 is left",
    );
    expect(refused.details).toEqual({ limit: 'budgetUsd', value: 0.002001 });
    state.settleCall(root, 8_000, 1_500, 'microUsd');
    expect(state.record(state.rootId)!.subtreeMicroUsd).toBe(1_500);
    state.reserveCall(root, 8_500, 'microUsd');
  });

  test('a grant without a budget in dollars keeps no dollar counters', () => {
    const state = newRun();
    const child = spawn(state, state.rootId);
    state.reserve(scope(state, child.id), { tokens: 1_000, owed: 0, spent: 0 });
    state.refund(child.id, 10);
    expect(state.record(child.id)).not.toHaveProperty('subtreeMicroUsd');
    expect(state.record(child.id)).not.toHaveProperty('heldMicroUsd');
  });
});
