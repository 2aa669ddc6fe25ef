import fc from 'fast-check';
import { KitError } from '../../domain/errors';
import { RootRunState, type ThreadRecord } from '../../domain/run-state';
import type { AgentLimits, SpawnRequestInput, ThreadStatus } from '../../domain/schemas';
import { durableSnapshot, newRun, now, propertyParameters, restored, scopeOf } from '../helpers/run-state';

/**
 * Model-based property of RootRunState: random command sequences run against the real state and a
 * deliberately simple model (a list of threads with parent links, counted from scratch each time).
 */

type LimitName = keyof AgentLimits;
type Command =
  | {
      type: 'spawn';
      parent: number;
      name?: string;
      task: string;
      limits?: Partial<AgentLimits>;
      requestId?: number;
    }
  | { type: 'end'; thread: number; status: 'completed' | 'failed' | 'cancelled' }
  | { type: 'turn'; thread: number; tokens: number; stale: boolean }
  | { type: 'message'; from: number; to: number }
  | { type: 'take'; by: number }
  | { type: 'revoke'; by: number }
  | { type: 'close' }
  | { type: 'restore' }
  /** The last spawn again, as a caller retrying after a lost reply would send it. */
  | { type: 'retry' };

interface ModelThread {
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

interface Model {
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
type Expected = { ok: true } | { ok: false; kind: string; limit?: LimitName };

const hex = (n: number, lead: string) => `${lead}${n.toString(16).padStart(31, '0')}`;
const requestIdOf = (n: number) => `request_${hex(n, 'e')}`;
const at = <Item>(items: readonly Item[], index: number): Item => items[index % items.length]!;

const limitsArbitrary = fc.record(
  {
    maxDepth: fc.integer({ min: 0, max: 3 }),
    maxConcurrent: fc.integer({ min: 1, max: 4 }),
    maxTotal: fc.integer({ min: 1, max: 6 }),
    budgetTokens: fc.integer({ min: 0, max: 120 }),
  },
  { requiredKeys: [] },
);

const index = fc.nat({ max: 40 });
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record(
      {
        type: fc.constant('spawn' as const),
        parent: index,
        name: fc.constantFrom('scout', 'writer', 'agent-1', 'agent-2', 'agent-3'),
        task: fc.constantFrom('research', 'summarise'),
        limits: limitsArbitrary,
        requestId: fc.nat({ max: 7 }),
      },
      { requiredKeys: ['type', 'parent', 'task'] },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('end' as const),
      thread: index,
      status: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      type: fc.constant('turn' as const),
      thread: index,
      tokens: fc.nat({ max: 40 }),
      stale: fc.boolean(),
    }),
  },
  { weight: 8, arbitrary: fc.record({ type: fc.constant('message' as const), from: index, to: index }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('take' as const), by: index }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('revoke' as const), by: index }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('close' as const) }) },
  { weight: 5, arbitrary: fc.record({ type: fc.constant('restore' as const) }) },
  { weight: 6, arbitrary: fc.record({ type: fc.constant('retry' as const) }) },
);

const grantArbitrary = fc.record({
  maxDepth: fc.integer({ min: 1, max: 4 }),
  maxConcurrent: fc.integer({ min: 1, max: 6 }),
  maxTotal: fc.integer({ min: 1, max: 12 }),
  budgetTokens: fc.integer({ min: 40, max: 300 }),
  spentTokens: fc.nat({ max: 30 }),
});

// --- the model ---------------------------------------------------------------------------------------

const byId = (model: Model, id: string | null) => model.threads.find((thread) => thread.id === id);
const isSelfOrAncestor = (model: Model, ancestorId: string, id: string): boolean => {
  for (let current = byId(model, id); current; current = byId(model, current.parentId)) {
    if (current.id === ancestorId) return true;
  }
  return false;
};
const strictDescendants = (model: Model, id: string) =>
  model.threads.filter((thread) => thread.id !== id && isSelfOrAncestor(model, id, thread.id));
const subtreeTokens = (model: Model, id: string) =>
  model.threads
    .filter((thread) => isSelfOrAncestor(model, id, thread.id))
    .reduce((sum, thread) => sum + thread.tokens, 0) + (id === model.threads[0]!.id ? model.spentTokens : 0);
const liveSiblingNamed = (model: Model, parentId: string, name: string) =>
  model.threads.some((thread) => thread.parentId === parentId && thread.name === name && !thread.terminal);

/** SPEC S4.1 in the order the host checks it. */
function expectSpawn(
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

/** Runs `act`; on a predicted failure, checks its kind and that the state did not change at all. */
function expectOutcome<Result>(
  state: RootRunState,
  expected: Expected,
  act: () => Result,
): Result | undefined {
  const before = JSON.stringify(state.snapshot());
  let result: Result;
  try {
    result = act();
  } catch (error) {
    if (!(error instanceof KitError)) throw error;
    if (expected.ok)
      throw new Error(`expected success, got ${error.kind}: ${error.message}`, { cause: error });
    expect({ kind: error.kind, limit: (error.details as { limit?: string } | undefined)?.limit }).toEqual({
      kind: expected.kind,
      limit: expected.limit,
    });
    expect(JSON.stringify(state.snapshot())).toBe(before);
    return undefined;
  }
  if (!expected.ok) throw new Error(`expected ${expected.kind} ${expected.limit ?? ''}, got success`);
  return result;
}

// --- one step ----------------------------------------------------------------------------------------

function step(state: RootRunState, model: Model, command: Command): RootRunState {
  const pick = (position: number) => at(model.threads, position);
  switch (command.type) {
    case 'retry':
      return model.lastSpawn ? step(state, model, model.lastSpawn) : state;
    case 'spawn': {
      model.lastSpawn = command;
      const caller = pick(command.parent);
      const request: SpawnRequestInput = { task: command.task };
      if (command.name !== undefined) request.name = command.name;
      if (command.limits !== undefined) request.limits = command.limits;
      if (command.requestId !== undefined) request.requestId = requestIdOf(command.requestId) as never;
      const threadId = `thread_${hex(model.nextId++, 'c')}` as const;
      const expected = expectSpawn(model, caller, command);
      const admission = expectOutcome(state, expected, () =>
        state.admit(scopeOf(state, caller.id), request, { threadId, taskQueue: 'local', now }),
      );
      if (!admission) return state;
      const seen = command.requestId !== undefined && model.requests.get(requestIdOf(command.requestId));
      if (seen) {
        // Same request id, same body: the same thread, counted once.
        expect(admission).toMatchObject({ existing: true, record: { thread: { id: seen.threadId } } });
        return state;
      }
      const { thread } = admission.record;
      expect(admission.existing).toBe(false);
      expect(thread).toMatchObject({ id: threadId, parentId: caller.id, depth: caller.depth + 1 });
      if (command.name !== undefined) expect(thread.name).toBe(command.name);
      else expect(liveSiblingNamed(model, caller.id, thread.name)).toBe(false);
      expect(thread.path).toBe(`${caller.path}/${thread.name}`);
      const requested = command.limits ?? {};
      model.threads.push({
        id: threadId,
        parentId: caller.id,
        depth: caller.depth + 1,
        name: thread.name,
        path: thread.path,
        terminal: false,
        tokens: 0,
        turnsCompleted: 0,
        limits: {
          maxDepth: Math.min(caller.limits.maxDepth, caller.depth + 1 + (requested.maxDepth ?? Infinity)),
          maxConcurrent: Math.min(caller.limits.maxConcurrent, requested.maxConcurrent ?? Infinity),
          maxTotal: Math.min(caller.limits.maxTotal, requested.maxTotal ?? Infinity),
          budgetTokens: Math.min(caller.limits.budgetTokens, requested.budgetTokens ?? Infinity),
        },
      });
      if (command.requestId !== undefined) {
        const body = JSON.stringify([caller.id, command.name ?? null, command.task, command.limits ?? null]);
        model.requests.set(requestIdOf(command.requestId), { body, threadId });
      }
      return state;
    }
    case 'end': {
      // Sub-agents end; the root does not (it would close the run). With no sub-agent yet, the event
      // names an unknown thread, which must change nothing.
      const target = model.threads.length > 1 ? at(model.threads.slice(1), command.thread) : undefined;
      const before = JSON.stringify(state.snapshot());
      state.threadEnded(target?.id ?? `thread_${hex(model.nextId++, 'b')}`, command.status, now, true);
      if (!target || target.terminal) expect(JSON.stringify(state.snapshot())).toBe(before);
      if (target) target.terminal = true;
      return state;
    }
    case 'turn': {
      const target = pick(command.thread);
      const stale = command.stale && target.turnsCompleted > 0;
      const turn = stale ? target.turnsCompleted : target.turnsCompleted + 1;
      const before = JSON.stringify(state.snapshot());
      state.turnEnded(
        target.id,
        { turn, status: 'completed', tokens: command.tokens, endedAt: now },
        command.tokens % 2 ? 'running' : 'idle',
      );
      if (stale || target.terminal) {
        expect(JSON.stringify(state.snapshot())).toBe(before);
      } else {
        target.tokens += command.tokens;
        target.turnsCompleted = turn;
      }
      return state;
    }
    case 'message': {
      const from = pick(command.from);
      const to = pick(command.to);
      const related =
        from.id !== to.id &&
        (from.parentId === null ||
          isSelfOrAncestor(model, to.id, from.id) ||
          isSelfOrAncestor(model, from.id, to.id));
      const expected: Expected = from.terminal
        ? { ok: false, kind: 'Closed' }
        : !related
          ? { ok: false, kind: 'PermissionDenied' }
          : to.terminal
            ? { ok: false, kind: 'Closed' }
            : { ok: true };
      const messageId = `message_${hex(model.nextId++, 'd')}` as const;
      const sent = expectOutcome(state, expected, () =>
        state.prepareMessage(scopeOf(state, from.id), { recipient: to.id, content: 'hi' }, messageId, now),
      );
      if (sent) {
        const seq = (model.seq.get(to.id) ?? 0) + 1;
        model.seq.set(to.id, seq);
        expect(sent).toMatchObject({ id: messageId, sender: from.id, recipient: to.id, seq });
        if (to.parentId === null) model.rootMailbox.push(seq);
      }
      return state;
    }
    case 'take': {
      const caller = pick(command.by);
      const expected: Expected =
        caller.parentId === null ? { ok: true } : { ok: false, kind: 'PermissionDenied' };
      const taken = expectOutcome(state, expected, () => state.takeRootMessages(scopeOf(state, caller.id)));
      if (taken) {
        expect(taken.map((sent) => sent.seq)).toEqual(model.rootMailbox);
        model.rootMailbox = [];
      }
      return state;
    }
    case 'revoke': {
      const caller = pick(command.by);
      const expected: Expected =
        caller.parentId === null ? { ok: true } : { ok: false, kind: 'PermissionDenied' };
      const revoked = expectOutcome(state, expected, () => {
        state.revokeGrant(scopeOf(state, caller.id));
        return true;
      });
      if (revoked) model.revoked = true;
      return state;
    }
    case 'close':
      state.closeAdmission();
      model.open = false;
      return state;
    case 'restore': {
      const next = restored(state);
      expect(next.snapshot()).toEqual(durableSnapshot(state));
      return next;
    }
  }
}

// --- invariants --------------------------------------------------------------------------------------

function checkInvariants(state: RootRunState, model: Model): void {
  const { records, requestIndex } = durableSnapshot(state);
  const byThread = new Map<string, ThreadRecord>(records.map((record) => [record.thread.id, record]));
  const isDescendant = (record: ThreadRecord, of: ThreadRecord): boolean => {
    for (let up = byThread.get(record.thread.parentId ?? ''); up; up = byThread.get(up.thread.parentId ?? ''))
      if (up === of) return true;
    return false;
  };
  // Counters are exactly what the tree says, in every subtree (counted here from the parent links).
  const counted = records.map((record) => {
    const descendants = records.filter((other) => isDescendant(other, record));
    return {
      path: record.thread.path,
      terminal: isTerminalStatus(record.thread.status),
      parentId: record.thread.parentId,
      limits: record.limits,
      live: descendants.filter((other) => !isTerminalStatus(other.thread.status)).length,
      total: descendants.length,
      tokens: subtreeTokens(model, record.thread.id),
    };
  });
  const recorded = records.map((record, position) => ({
    ...counted[position]!,
    live: record.subtreeLive,
    total: record.subtreeTotal,
    tokens: record.subtreeTokens,
  }));
  expect(recorded).toEqual(counted);
  expect(counted).toEqual(
    model.threads.map((thread, position) => ({
      ...counted[position]!,
      path: thread.path,
      terminal: thread.terminal,
      parentId: thread.parentId,
      limits: thread.limits,
    })),
  );
  // No limit is ever exceeded, and no child's limits are wider than its parent's.
  const violations: string[] = [];
  for (const record of records) {
    const { limits, thread } = record;
    if (record.subtreeLive > limits.maxConcurrent) violations.push(`${thread.path}: live over maxConcurrent`);
    if (record.subtreeTotal > limits.maxTotal) violations.push(`${thread.path}: total over maxTotal`);
    for (const member of records)
      if ((member === record || isDescendant(member, record)) && member.thread.depth > limits.maxDepth)
        violations.push(`${member.thread.path}: depth over maxDepth ${limits.maxDepth} of ${thread.path}`);
    const parent = byThread.get(thread.parentId ?? '');
    for (const limit of Object.keys(limits) as LimitName[])
      if (parent && limits[limit] > parent.limits[limit]) violations.push(`${thread.path}: ${limit} wider`);
    const twin = records.find(
      (other) =>
        other !== record &&
        other.thread.parentId === thread.parentId &&
        other.thread.name === thread.name &&
        !isTerminalStatus(other.thread.status) &&
        !isTerminalStatus(thread.status),
    );
    if (twin) violations.push(`${thread.path}: two live siblings share the name`);
  }
  expect(violations).toEqual([]);
  // The same request id always names the same thread.
  expect(Object.fromEntries(Object.entries(requestIndex).map(([id, seen]) => [id, seen.threadId]))).toEqual(
    Object.fromEntries([...model.requests].map(([id, seen]) => [id, seen.threadId])),
  );
  expect({
    rootMailbox: state.pendingRootMessages().map((sent) => sent.seq),
    open: state.isAdmissionOpen,
    revoked: state.grant.revoked,
  }).toEqual({ rootMailbox: model.rootMailbox, open: model.open, revoked: model.revoked });
}

const isTerminalStatus = (status: ThreadStatus) => ['completed', 'failed', 'cancelled'].includes(status);

test('random command sequences keep every counter exact, every limit respected and every rejection side-effect free', () => {
  fc.assert(
    fc.property(
      grantArbitrary,
      fc.stringMatching(/^[0-9a-f]{31}$/),
      fc.array(commandArbitrary, { maxLength: 50, size: 'max' }),
      (grant, rootHex, commands) => {
        let state = newRun(grant, { rootThreadId: `thread_a${rootHex}` });
        const model: Model = {
          threads: [
            {
              id: state.rootId,
              parentId: null,
              depth: 0,
              name: 'root',
              path: '/root',
              terminal: false,
              tokens: 0,
              turnsCompleted: 0,
              limits: {
                maxDepth: grant.maxDepth,
                maxConcurrent: grant.maxConcurrent,
                maxTotal: grant.maxTotal,
                budgetTokens: grant.budgetTokens,
              },
            },
          ],
          requests: new Map(),
          open: true,
          revoked: false,
          spentTokens: grant.spentTokens,
          seq: new Map(),
          rootMailbox: [],
          nextId: 1,
        };
        checkInvariants(state, model);
        for (const command of commands) {
          state = step(state, model, command);
          checkInvariants(state, model);
        }
      },
    ),
    propertyParameters(300),
  );
});
