import { type Command, type LimitName, requestIdOf } from './run-state-commands';
import type { AgentLimits } from '../../domain/schemas';

// The deliberately simple model RootRunState is checked against: a list of threads with parent links,
// everything counted from scratch each time.

export interface ModelThread {
  id: string;
  parentId: string | null;
  depth: number;
  name: string;
  path: string;
  terminal: boolean;
  tokens: number;
  turnsCompleted: number;
  limits: AgentLimits;
}

export interface Model {
  threads: ModelThread[];
  requests: Map<string, { body: string; threadId: string }>;
  open: boolean;
  revoked: boolean;
  spentTokens: number;
  seq: Map<string, number>;
  rootMailbox: number[];
  nextId: number;
  lastSpawn?: Extract<Command, { type: 'spawn' }>;
}

/** What the model says a command must do: succeed, or fail with this kind (and quota limit). */
export type Expected = { ok: true } | { ok: false; kind: string; limit?: LimitName };

const byId = (model: Model, id: string | null) => model.threads.find((thread) => thread.id === id);
export const isSelfOrAncestor = (model: Model, ancestorId: string, id: string): boolean => {
  for (let current = byId(model, id); current; current = byId(model, current.parentId)) {
    if (current.id === ancestorId) return true;
  }
  return false;
};
const strictDescendants = (model: Model, id: string) =>
  model.threads.filter((thread) => thread.id !== id && isSelfOrAncestor(model, id, thread.id));
export const subtreeTokens = (model: Model, id: string) =>
  model.threads
    .filter((thread) => isSelfOrAncestor(model, id, thread.id))
    .reduce((sum, thread) => sum + thread.tokens, 0) + (id === model.threads[0]!.id ? model.spentTokens : 0);
export const liveSiblingNamed = (model: Model, parentId: string, name: string) =>
  model.threads.some((thread) => thread.parentId === parentId && thread.name === name && !thread.terminal);

/** SPEC S4.1 in the order the host checks it. */
export function expectSpawn(
  model: Model,
  caller: ModelThread,
  command: Extract<Command, { type: 'spawn' }>,
): Expected {
  const body = JSON.stringify([caller.id, command.name ?? null, command.task, command.limits ?? null]);
  if (command.requestId !== undefined) {
    const seen = model.requests.get(requestIdOf(command.requestId));
    if (seen) return seen.body === body ? { ok: true } : { ok: false, kind: 'Conflict' };
  }
  if (!model.open) return { ok: false, kind: 'Closed' };
  if (model.revoked) return { ok: false, kind: 'PermissionDenied' };
  if (caller.terminal) return { ok: false, kind: 'Closed' };
  for (let limiter = byId(model, caller.id); limiter; limiter = byId(model, limiter.parentId)) {
    const descendants = strictDescendants(model, limiter.id);
    const exceeded: LimitName | undefined =
      caller.depth + 1 > limiter.limits.maxDepth
        ? 'maxDepth'
        : descendants.filter((thread) => !thread.terminal).length >= limiter.limits.maxConcurrent
          ? 'maxConcurrent'
          : descendants.length >= limiter.limits.maxTotal
            ? 'maxTotal'
            : subtreeTokens(model, limiter.id) >= limiter.limits.budgetTokens
              ? 'budgetTokens'
              : undefined;
    if (exceeded) return { ok: false, kind: 'QuotaExceeded', limit: exceeded };
  }
  if (command.name !== undefined && liveSiblingNamed(model, caller.id, command.name))
    return { ok: false, kind: 'Conflict' };
  return { ok: true };
}
