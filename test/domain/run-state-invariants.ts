import type { RootRunState, ThreadRecord } from '../../domain/run-state';
import type { ThreadStatus } from '../../domain/schemas';
import { durableSnapshot } from '../helpers/run-state';
import type { LimitName } from './run-state-commands';
import { type Model, subtreeTokens } from './run-state-model';

// What must hold after every command: exact counters, limits respected, request ids stable.

export function checkInvariants(state: RootRunState, model: Model): void {
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
      if (parent && (limits[limit] ?? Infinity) > (parent.limits[limit] ?? Infinity))
        violations.push(`${thread.path}: ${limit} wider`);
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
  // The same request id always names the same thread: admitted ones in their records, tombstones in the index.
  const named = [
    ...records.flatMap((record) => (record.requestId ? [[record.requestId, record.thread.id] as const] : [])),
    ...Object.entries(requestIndex).map(([id, seen]) => [id, seen.threadId] as const),
  ];
  expect(Object.fromEntries(named)).toEqual(
    Object.fromEntries([...model.requests].map(([id, seen]) => [id, seen.threadId])),
  );
  expect({
    rootMailbox: state.pendingRootMessages().map((sent) => sent.seq),
    open: state.isAdmissionOpen,
    revoked: state.grant.revoked,
  }).toEqual({ rootMailbox: model.rootMailbox, open: model.open, revoked: model.revoked });
}

const isTerminalStatus = (status: ThreadStatus) => ['completed', 'failed', 'cancelled'].includes(status);
