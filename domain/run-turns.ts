import { quota } from './run-errors';
import { isTerminal, type TurnOutcome } from './schemas';
import type { RunSnapshot, ThreadRecord } from './run-snapshot';
import type { ThreadRegistry } from './thread-registry';

/**
 * Turn accounting of a root run's threads: the status turns move a thread through, and the tokens a
 * thread uses charged to it and every ancestor, so each subtree's budget sees them (SPEC S6.4).
 */

/** A turn of `threadId` started. Events about terminal threads or older turns are ignored. */
export function turnStarted(registry: ThreadRegistry, threadId: string, turn: number, at: string): void {
  const record = registry.get(threadId);
  if (!record || isTerminal(record.thread.status) || turn <= record.thread.turnsStarted) return;
  record.thread = { ...record.thread, status: 'running', turnsStarted: turn, updatedAt: at };
}

/**
 * A turn ended. Before the `turnTokens` feature its outcome's tokens (a reply's own) are charged here, to
 * the thread's subtree and every ancestor's; with it (`outcomeCharged`) they count what the turn's calls
 * used, charged as each was made.
 */
export function turnEnded(
  registry: ThreadRegistry,
  threadId: string,
  outcome: TurnOutcome,
  nextStatus: 'idle' | 'running',
  outcomeCharged = false,
): void {
  const record = registry.get(threadId);
  if (!record || isTerminal(record.thread.status) || outcome.turn <= record.thread.turnsCompleted) return;
  record.thread = {
    ...record.thread,
    // A later turn already started (its event overtook this one): the thread is still running.
    status: record.thread.turnsStarted > outcome.turn ? 'running' : nextStatus,
    turnsStarted: Math.max(record.thread.turnsStarted, outcome.turn),
    turnsCompleted: outcome.turn,
    latestTurn: outcome,
    ...(outcome.turn === 1 ? { firstTurn: outcome } : {}),
    updatedAt: outcome.endedAt,
  };
  if (outcomeCharged) return;
  for (const charged of registry.selfAndAncestors(record)) charged.subtreeTokens += outcome.tokens;
}

/** What a budget counts: tokens, or micro-dollars at the worker's price table (SPEC S6.4, S11.3). */
export type BudgetUnit = 'tokens' | 'microUsd';

/** How a record keeps one unit: its subtree's use, what its thread holds, its limit, and the words for it. */
interface Meter {
  used(record: ThreadRecord): number;
  setUsed(record: ThreadRecord, value: number): void;
  held(record: ThreadRecord): number;
  setHeld(record: ThreadRecord, value: number): void;
  limit(record: ThreadRecord): number;
  name: 'budgetTokens' | 'budgetUsd';
  /** The limit as a person reads it (dollars for micro-dollars). */
  shown(amount: number): string;
}

const meters: Record<BudgetUnit, Meter> = {
  tokens: {
    used: (record) => record.subtreeTokens,
    setUsed: (record, value) => (record.subtreeTokens = value),
    held: (record) => record.held,
    setHeld: (record, value) => (record.held = value),
    limit: (record) => record.limits.budgetTokens,
    name: 'budgetTokens',
    shown: (amount) => `${amount} tokens`,
  },
  microUsd: {
    used: (record) => record.subtreeMicroUsd ?? 0,
    setUsed: (record, value) => (record.subtreeMicroUsd = value),
    held: (record) => record.heldMicroUsd ?? 0,
    setHeld: (record, value) => (record.heldMicroUsd = value),
    limit: (record) => record.limits.budgetMicroUsd ?? Infinity,
    name: 'budgetUsd',
    shown: (amount) => `$${(amount / 1e6).toFixed(6)}`,
  },
};

/** The least budget of `unit` left on the way up from `caller` (Infinity when none is set). */
function leastLeft(registry: ThreadRegistry, caller: ThreadRecord, meter: Meter): number {
  let remaining = Infinity;
  for (const record of registry.selfAndAncestors(caller))
    remaining = Math.min(remaining, meter.limit(record) - meter.used(record));
  return remaining;
}

/** Adds `amount` (negative: gives back) to `unit`'s use of `record` and every ancestor, never below 0. */
function addUse(registry: ThreadRegistry, record: ThreadRecord, meter: Meter, amount: number): void {
  for (const charged of registry.selfAndAncestors(record))
    meter.setUsed(charged, Math.max(0, meter.used(charged) + amount));
}

/** QuotaExceeded naming the first budget of `unit` on the way up that is used up, if one is. */
export function checkBudget(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  unit: BudgetUnit = 'tokens',
): void {
  const meter = meters[unit];
  for (const limiter of registry.selfAndAncestors(caller)) {
    if (meter.used(limiter) >= meter.limit(limiter)) {
      const limit = meter.limit(limiter);
      throw quota(
        `${unit === 'tokens' ? 'token' : 'dollar'} budget ${meter.shown(limit)} exhausted in ${registry.subtreeName(limiter)}: ${meter.shown(meter.used(limiter))} used`,
        { limit: meter.name, value: unit === 'tokens' ? limit : limit / 1e6 },
      );
    }
  }
}

/**
 * Charges what `caller` used mid-turn to it and every ancestor; once any budget on the way up is used
 * up, QuotaExceeded (the use stays charged). Returns the least budget left on the way up.
 */
export function charge(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  amount: number,
  unit: BudgetUnit = 'tokens',
): { remaining: number } {
  const meter = meters[unit];
  addUse(registry, caller, meter, amount);
  const remaining = leastLeft(registry, caller, meter);
  checkBudget(registry, caller, unit);
  return { remaining };
}

/**
 * SPEC S6.4 for the root's own turns: tokens a turn reports at once (a scripted reply's). Refused
 * (QuotaExceeded, nothing counted) once a budget on the way up is used up; else counted whole, even past
 * what is left, and a reply that went past one answers its QuotaExceeded (`endsTurn`): its tokens count,
 * and its turn ends with it. So a tree passes its budget by less than one reply.
 */
export function chargeReported(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  amount: number,
): { endsTurn?: unknown } {
  checkBudget(registry, caller);
  addUse(registry, caller, meters.tokens, amount);
  if (leastLeft(registry, caller, meters.tokens) >= 0) return {};
  try {
    checkBudget(registry, caller);
  } catch (error) {
    return { endsTurn: error };
  }
  return {};
}

/**
 * SPEC S6.4 without a round trip per model call: sets an amount aside for a thread (`held`), which spends
 * it itself and asks again before it runs out. It reports what it `spent` of it since it last did, and
 * `owed` (what it spent past it), which is charged first: QuotaExceeded stands when that uses a budget
 * up. The new allowance is a quarter of the least budget left on the way up at most, so several threads
 * can hold one; what is held counts as used until spent or given back (`giveBack`, {@link refund}). Tokens, or
 * micro-dollars in a tree with a budget in dollars (`unit`, SPEC S11.3).
 */
export function reserve(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  request: {
    tokens: number;
    owed: number;
    spent: number;
    need?: number | undefined;
    needMayPass?: true | undefined;
    unit?: BudgetUnit | undefined;
    giveBack?: number | undefined;
  },
): { granted: number; remaining: number } {
  const unit = request.unit ?? 'tokens';
  const meter = meters[unit];
  spent(caller, request.spent, unit);
  if (request.giveBack) {
    // Never refused: what the thread gives back is gone from it whatever the answer, so the root must
    // take it (and what it owed) even when a budget on the way up is used up.
    const back = Math.min(request.giveBack, meter.held(caller));
    meter.setHeld(caller, meter.held(caller) - back);
    addUse(registry, caller, meter, request.owed - back);
    return { granted: 0, remaining: leastLeft(registry, caller, meter) };
  }
  const { remaining } = charge(registry, caller, request.owed, unit);
  const share = Math.max(0, Math.min(request.tokens, Math.floor(remaining / 4)));
  const need = Math.min(request.need ?? 0, request.tokens);
  // `charge` above refused a used-up budget, so a need that may pass it is granted while room is left.
  const granted = share < need && (need <= remaining || request.needMayPass) ? need : share;
  // Within what is left by construction (or past it by less than a reported need), so it stands even
  // when it uses a budget up (charging it with the check would refuse it after counting it, and no one
  // would hold what it counted).
  if (granted > 0) addUse(registry, caller, meter, granted);
  meter.setHeld(caller, meter.held(caller) + granted);
  return { granted, remaining: remaining - granted };
}

/**
 * SPEC S11.3 for a thread that holds no allowance (the root, in its own workflow): sets `amount` aside for
 * one model call, or QuotaExceeded (nothing set aside) when a budget on the way up has no room for it.
 */
export function reserveCall(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  amount: number,
  unit: BudgetUnit = 'tokens',
): void {
  const meter = meters[unit];
  const remaining = leastLeft(registry, caller, meter);
  if (amount > remaining) {
    throw quota(
      unit === 'tokens'
        ? `the token budget has no room for another model call: it may use ${amount} tokens (its maximum output and its input's estimate), and ${Math.max(0, remaining)} are left`
        : `the dollar budget has no room for another model call: it may cost ${meter.shown(amount)} (its maximum output and its input's estimate at the worker's prices), and ${meter.shown(Math.max(0, remaining))} is left`,
      { limit: meter.name, value: unit === 'tokens' ? amount : amount / 1e6 },
    );
  }
  addUse(registry, caller, meter, amount);
}

/** The call that {@link reserveCall} set `reserved` aside for used `used`: charged that instead. */
export function settleCall(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  reserved: number,
  used: number,
  unit: BudgetUnit = 'tokens',
): void {
  addUse(registry, caller, meters[unit], used - reserved);
}

/** A thread spent `amount` of what it holds (it was counted when set aside). */
export function spent(record: ThreadRecord | undefined, amount: number, unit: BudgetUnit = 'tokens'): void {
  const meter = meters[unit];
  if (record && (amount > 0 || unit === 'tokens'))
    meter.setHeld(record, Math.max(0, meter.held(record) - amount));
}

/** Gives back what a thread held and did not spend, once it has ended. */
export function refund(
  registry: ThreadRegistry,
  threadId: string,
  unused: number,
  unit: BudgetUnit = 'tokens',
): void {
  const record = registry.get(threadId);
  if (!record) return;
  const meter = meters[unit];
  const back = Math.min(unused, meter.held(record));
  if (meter.held(record) > 0 || unit === 'tokens') meter.setHeld(record, 0);
  if (back > 0) addUse(registry, record, meter, -back);
}

/** Tokens used in a run: everything charged, less what threads hold and have not spent yet. */
export function usedTokens(records: Iterable<ThreadRecord>, rootTokens: number): number {
  let held = 0;
  for (const record of records) held += record.held;
  return rootTokens - held;
}

/** SPEC S11.3: as {@link usedTokens}, the micro-dollars used under a budget in dollars. */
export function usedMicroUsd(records: Iterable<ThreadRecord>, rootMicroUsd: number): number {
  let held = 0;
  for (const record of records) held += record.heldMicroUsd ?? 0;
  return rootMicroUsd - held;
}

/** Counters of a root run, read from its durable state. */
export interface RunCounters {
  live: number;
  total: number;
  tokens: number;
  /**
   * SPEC S11.3: under a budget in dollars (`grant.budgetUsd`), what the tree's model calls cost at the
   * worker's prices, and that budget; absent without one.
   */
  costUsd?: number;
  budgetUsd?: number;
  admissionOpen: boolean;
}

/** The counters of the root run `rootId` whose state is `snapshot`. */
export function runCounters(snapshot: RunSnapshot, rootId: string): RunCounters {
  const root = snapshot.records.find((record) => record.thread.id === rootId)!;
  return {
    live: root.subtreeLive,
    total: root.subtreeTotal,
    // What threads hold counts once they spend it (SPEC S6.4).
    tokens: usedTokens(snapshot.records, root.subtreeTokens),
    ...(root.limits.budgetMicroUsd === undefined
      ? {}
      : {
          costUsd: usedMicroUsd(snapshot.records, root.subtreeMicroUsd ?? 0) / 1e6,
          budgetUsd: root.limits.budgetMicroUsd / 1e6,
        }),
    admissionOpen: snapshot.admissionOpen,
  };
}

/** A message with triggerTurn went to `threadId`: an idle thread is running again from now on. */
export function turnRequested(registry: ThreadRegistry, threadId: string): void {
  const record = registry.get(threadId);
  if (record?.thread.status === 'idle') record.thread = { ...record.thread, status: 'running' };
}
