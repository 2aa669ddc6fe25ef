import { quota } from './run-errors';
import { isTerminal, type TurnOutcome } from './schemas';
import type { ThreadRecord } from './run-snapshot';
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

/** A turn ended; its tokens are charged to the thread's subtree and every ancestor's. */
export function turnEnded(
  registry: ThreadRegistry,
  threadId: string,
  outcome: TurnOutcome,
  nextStatus: 'idle' | 'running',
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
  for (const charged of registry.selfAndAncestors(record)) charged.subtreeTokens += outcome.tokens;
}

/**
 * Charges tokens `caller` used mid-turn to it and every ancestor; once any budget on the way up is used
 * up, QuotaExceeded (the tokens stay charged). Returns the least budget left on the way up.
 */
export function charge(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  tokens: number,
): { remaining: number } {
  let remaining = Infinity;
  for (const charged of registry.selfAndAncestors(caller)) {
    charged.subtreeTokens += tokens;
    remaining = Math.min(remaining, charged.limits.budgetTokens - charged.subtreeTokens);
  }
  for (const limiter of registry.selfAndAncestors(caller)) {
    if (limiter.subtreeTokens >= limiter.limits.budgetTokens) {
      throw quota(
        `token budget ${limiter.limits.budgetTokens} exhausted in ${registry.subtreeName(limiter)}: ${limiter.subtreeTokens} tokens used`,
        {
          limit: 'budgetTokens',
          value: limiter.limits.budgetTokens,
        },
      );
    }
  }
  return { remaining };
}

/**
 * SPEC S6.4 without a round trip per model call: sets tokens aside for a thread (`held`), which spends
 * them itself and asks again before they run out. It reports what it `spent` of them since it last
 * did, and `owed` (what it spent past them), which is charged first: QuotaExceeded stands when that uses
 * a budget up. The new allowance is a quarter of the least budget left on the way up at most, so several
 * threads can hold one; held tokens count as used until spent or given back ({@link refund}).
 */
export function reserve(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  request: { tokens: number; owed: number; spent: number; need?: number | undefined },
): { granted: number; remaining: number } {
  spent(caller, request.spent);
  const { remaining } = charge(registry, caller, request.owed);
  const share = Math.max(0, Math.min(request.tokens, Math.floor(remaining / 4)));
  const need = Math.min(request.need ?? 0, request.tokens);
  const granted = share < need && need <= remaining ? need : share;
  if (granted > 0) charge(registry, caller, granted);
  caller.held += granted;
  return { granted, remaining: remaining - granted };
}

/**
 * SPEC S11.3 for a thread that holds no allowance (the root, in its own workflow): sets `tokens` aside for
 * one model call, or QuotaExceeded (nothing set aside) when a budget on the way up has no room for them.
 */
export function reserveCall(registry: ThreadRegistry, caller: ThreadRecord, tokens: number): void {
  let remaining = Infinity;
  for (const charged of registry.selfAndAncestors(caller))
    remaining = Math.min(remaining, charged.limits.budgetTokens - charged.subtreeTokens);
  if (tokens > remaining) {
    throw quota(
      `the token budget has no room for another model call: it may use ${tokens} tokens (its maximum output and its input's estimate), and ${Math.max(0, remaining)} are left`,
      { limit: 'budgetTokens', value: tokens },
    );
  }
  for (const charged of registry.selfAndAncestors(caller)) charged.subtreeTokens += tokens;
}

/** The call that {@link reserveCall} set `reserved` aside for used `used`: charged that instead. */
export function settleCall(
  registry: ThreadRegistry,
  caller: ThreadRecord,
  reserved: number,
  used: number,
): void {
  for (const charged of registry.selfAndAncestors(caller))
    charged.subtreeTokens = Math.max(0, charged.subtreeTokens + used - reserved);
}

/** A thread spent `tokens` of what it holds (they were counted when set aside). */
export function spent(record: ThreadRecord | undefined, tokens: number): void {
  if (record) record.held = Math.max(0, record.held - tokens);
}

/** Gives back what a thread held and did not spend, once it has ended. */
export function refund(registry: ThreadRegistry, threadId: string, unused: number): void {
  const record = registry.get(threadId);
  if (!record) return;
  const back = Math.min(unused, record.held);
  record.held = 0;
  if (back <= 0) return;
  for (const charged of registry.selfAndAncestors(record))
    charged.subtreeTokens = Math.max(0, charged.subtreeTokens - back);
}

/** Tokens used in a run: everything charged, less what threads hold and have not spent yet. */
export function usedTokens(records: Iterable<ThreadRecord>, rootTokens: number): number {
  let held = 0;
  for (const record of records) held += record.held;
  return rootTokens - held;
}

/** A message with triggerTurn went to `threadId`: an idle thread is running again from now on. */
export function turnRequested(registry: ThreadRegistry, threadId: string): void {
  const record = registry.get(threadId);
  if (record?.thread.status === 'idle') record.thread = { ...record.thread, status: 'running' };
}
