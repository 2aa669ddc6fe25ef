import { KitError } from '../../domain/errors';
import type { ThreadId } from '../../domain/ids';
import type { RootRunState } from '../../domain/run-state';
import type { SpawnRequestInput } from '../../domain/schemas';
import { admitToRoot, durableSnapshot, now, restored, scopeOf } from '../helpers/run-state';
import { at, type Command, hex, requestIdOf } from './run-state-commands';
import {
  type Expected,
  expectSpawn,
  isSelfOrAncestor,
  liveSiblingNamed,
  type Model,
} from './run-state-model';

// One command run against the real state and the model, checking what the model predicts.

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

export function step(state: RootRunState, model: Model, command: Command): RootRunState {
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
      // An end event of a thread ended already changes nothing but confirm it (a close marks it first).
      if (!target || target.terminal)
        expect(JSON.stringify(state.snapshot())).toBe(confirmed(before, target?.id));
      // Cancelled by itself (Temporal's cancel request): the root run closes its live subtree.
      if (target && !target.terminal && command.status === 'cancelled') {
        const below = model.threads
          .filter(
            (thread) =>
              thread !== target && !thread.terminal && isSelfOrAncestor(model, target.id, thread.id),
          )
          .map((thread) => thread.id)
          .sort();
        expect(
          state
            .liveBelow(target.id)
            .map((record) => record.thread.id)
            .sort(),
        ).toEqual(below);
        expect(
          state
            .closeBelow(target.id, now)
            .map((record) => record.thread.id)
            .sort(),
        ).toEqual(below);
        for (const thread of model.threads) if (below.includes(thread.id)) thread.terminal = true;
      }
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
      // The root numbers its own mailbox; a message to any other thread is only checked here (its own
      // workflow numbers it).
      if (to.parentId !== null) {
        expectOutcome(state, expected, () =>
          state.checkMessage(scopeOf(state, from.id), {
            recipient: to.id as ThreadId,
            content: 'hi',
            triggerTurn: false,
          }),
        );
        return state;
      }
      const sent = expectOutcome(state, expected, () =>
        admitToRoot(state, scopeOf(state, from.id), { recipient: to.id, content: 'hi' }, messageId, now),
      );
      if (sent) {
        const seq = (model.seq.get(to.id) ?? 0) + 1;
        model.seq.set(to.id, seq);
        expect(sent).toMatchObject({ id: messageId, sender: from.id, recipient: to.id, seq });
        model.rootMailbox.push(seq);
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

/** A snapshot (as JSON) with `threadId`'s end confirmed. */
function confirmed(snapshot: string, threadId: string | undefined): string {
  const parsed = JSON.parse(snapshot) as { records: { thread: { id: string }; ended: boolean }[] };
  for (const record of parsed.records) if (record.thread.id === threadId) record.ended = true;
  return JSON.stringify(parsed);
}
