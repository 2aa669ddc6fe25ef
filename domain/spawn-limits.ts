import { conflict, quota } from './run-errors';
import type { ThreadRecord } from './run-snapshot';
import { AgentLimits, isTerminal, toMicroUsd, type SpawnRequest } from './schemas';
import type { ThreadRegistry } from './thread-registry';

/** The most threads a root run asks about at once when admission is full (workflows/outside-ends.ts). */
export const maxThreadsAsked = 1_000;

/**
 * SPEC S4.1 quotas: for the spawning thread and every ancestor, in that order, depth, live threads,
 * lifetime spawns and token budget (and dollar budget, SPEC S11.3) within its limits. QuotaExceeded names the first one reached.
 */
export function checkSpawnLimits(registry: ThreadRegistry, parent: ThreadRecord): void {
  const depth = parent.thread.depth + 1;
  for (const limiter of registry.selfAndAncestors(parent)) {
    const where = registry.subtreeName(limiter);
    const { limits } = limiter;
    if (depth > limits.maxDepth) {
      throw quota(`maxDepth ${limits.maxDepth} reached: thread ${parent.thread.path} cannot spawn`, {
        limit: 'maxDepth',
        value: limits.maxDepth,
      });
    }
    if (limiter.subtreeLive >= limits.maxConcurrent) {
      throw quota(
        `maxConcurrent ${limits.maxConcurrent} reached in ${where}: ${limiter.subtreeLive} threads are live`,
        {
          limit: 'maxConcurrent',
          value: limits.maxConcurrent,
        },
      );
    }
    if (limiter.subtreeTotal >= limits.maxTotal) {
      throw quota(`maxTotal ${limits.maxTotal} reached in ${where}: no more spawns in its lifetime`, {
        limit: 'maxTotal',
        value: limits.maxTotal,
      });
    }
    if (limiter.subtreeTokens >= limits.budgetTokens) {
      throw quota(`token budget ${limits.budgetTokens} exhausted in ${where}`, {
        limit: 'budgetTokens',
        value: limits.budgetTokens,
      });
    }
    if (limits.budgetMicroUsd !== undefined && (limiter.subtreeMicroUsd ?? 0) >= limits.budgetMicroUsd) {
      throw quota(`dollar budget $${limits.budgetMicroUsd / 1e6} exhausted in ${where}`, {
        limit: 'budgetUsd',
        value: limits.budgetMicroUsd / 1e6,
      });
    }
  }
}

/** A child's limits: what it asked for, never wider than its parent's (maxDepth becomes absolute). */
export function childLimits(parent: ThreadRecord, requested: SpawnRequest['limits'] = {}): AgentLimits {
  const depth = parent.thread.depth + 1;
  return {
    maxDepth: Math.min(
      parent.limits.maxDepth,
      requested.maxDepth === undefined ? Infinity : depth + requested.maxDepth,
    ),
    maxConcurrent: Math.min(parent.limits.maxConcurrent, requested.maxConcurrent ?? Infinity),
    maxTotal: Math.min(parent.limits.maxTotal, requested.maxTotal ?? Infinity),
    budgetTokens: Math.min(parent.limits.budgetTokens, requested.budgetTokens ?? Infinity),
    ...budgetMicroUsd(parent.limits.budgetMicroUsd, requested.budgetUsd),
  };
}

/** SPEC S11.3: the child's budget in dollars, the least of its parent's and what it asked for (if any). */
function budgetMicroUsd(parent: number | undefined, requestedUsd: number | undefined) {
  const requested = requestedUsd === undefined ? undefined : toMicroUsd(requestedUsd);
  if (parent === undefined && requested === undefined) return {};
  return { budgetMicroUsd: Math.min(parent ?? Infinity, requested ?? Infinity) };
}

/**
 * The new child's name: the requested one, Conflict when a live sibling has it; or the first free
 * `agent-<n>` from the run's spawn count on (a generated name skips names a sibling took explicitly, so
 * only an explicit name can conflict).
 */
export function childName(
  registry: ThreadRegistry,
  parent: ThreadRecord,
  requested: string | undefined,
): string {
  const liveSibling = (name: string) =>
    registry
      .threads()
      .some(
        (thread) =>
          thread.parentId === parent.thread.id && thread.name === name && !isTerminal(thread.status),
      );
  let generated = registry.counters().total + 1;
  while (!requested && liveSibling(`agent-${generated}`)) generated += 1;
  const name = requested ?? `agent-${generated}`;
  if (liveSibling(name)) throw conflict(`${parent.thread.path} already has a live child named ${name}`);
  return name;
}
