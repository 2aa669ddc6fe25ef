import { jsonBytes } from './bytes';
import { parseInput } from './errors';
import { parseId, type ThreadId } from './ids';
import { denied, quota } from './run-errors';
import { clipRecord, registryBudgetBytes, type ThreadRecord } from './run-snapshot';
import { AgentThread, ControlScope, isTerminal, ThreadStatus } from './schemas';

/** A record's bytes fully clipped, plus its share of the request index and mailbox sequence entries. */
/**
 * What a record counts for in the registry's budget: its JSON at its smallest (`clipRecord(…, 0)`), a
 * terminal status, counters grown to many digits, and its id in a shutdown report.
 */
const minimalBytes = (record: ThreadRecord) => jsonBytes(clipRecord(record, 0)) + 120;

/**
 * The threads of one root run (SPEC S3, S4.4): their records in spawn order, the subtree counters each
 * thread keeps for everything below it, scope checks, and the registry's byte budget. Every walk up the
 * tree goes through {@link ThreadRegistry.selfAndAncestors}.
 */
export class ThreadRegistry {
  private readonly records = new Map<string, ThreadRecord>();
  /** What the registry takes with every text clipped as far as `fitRegistry` goes: admission keeps it in budget. */
  private minimalRegistryBytes = 0;

  constructor(
    readonly rootId: ThreadId,
    records: readonly ThreadRecord[],
  ) {
    // Records are mutated in place (counters), so copy them: a snapshot must not share state with a run.
    for (const record of records) {
      this.records.set(record.thread.id, { ...record });
      this.minimalRegistryBytes += minimalBytes(record);
    }
  }

  /** Copies of the records in spawn order, as a snapshot carries them. */
  snapshot(): ThreadRecord[] {
    return this.all().map((record) => ({ ...record }));
  }

  get(threadId: string): ThreadRecord | undefined {
    return this.records.get(threadId);
  }

  get rootRecord(): ThreadRecord {
    return this.records.get(this.rootId)!;
  }

  /** Every record in spawn order, the root first. */
  all(): ThreadRecord[] {
    return [...this.records.values()];
  }

  /** Every record but the root's, in spawn order. */
  subAgents(): ThreadRecord[] {
    return this.all().filter((record) => record.thread.id !== this.rootId);
  }

  threads(): AgentThread[] {
    return this.all().map((record) => record.thread);
  }

  /** Live threads below the root, lifetime spawns, tokens used. */
  counters(): { live: number; total: number; tokens: number } {
    const root = this.rootRecord;
    return { live: root.subtreeLive, total: root.subtreeTotal, tokens: root.subtreeTokens };
  }

  /** The calling thread for a scope; the scope must belong to this run and name one of its threads. */
  caller(rawScope: ControlScope): ThreadRecord {
    const scope = parseInput(ControlScope, rawScope, 'scope');
    if (scope.rootId !== this.rootId)
      throw denied(`scope belongs to root run ${scope.rootId}, not ${this.rootId}`);
    const record = this.records.get(scope.threadId);
    if (!record) throw denied(`thread ${scope.threadId} is not part of root run ${this.rootId}`);
    return record;
  }

  /** `record` (when there is one), then its parent, and so on up to the root. */
  *selfAndAncestors(record: ThreadRecord | undefined): Generator<ThreadRecord, void, undefined> {
    for (let current = record; current; current = this.parentOf(current)) yield current;
  }

  /** `record`'s ancestors, its parent first. */
  ancestors(record: ThreadRecord): Generator<ThreadRecord, void, undefined> {
    return this.selfAndAncestors(this.parentOf(record));
  }

  /** Whether `ancestorId` is `threadId` itself or one of its ancestors. */
  isSelfOrAncestor(ancestorId: string, threadId: string): boolean {
    for (const current of this.selfAndAncestors(this.records.get(threadId))) {
      if (current.thread.id === ancestorId) return true;
    }
    return false;
  }

  /** How a limit's message names the subtree `record` heads. */
  subtreeName(record: ThreadRecord): string {
    return record.thread.id === this.rootId ? 'root run' : `subtree ${record.thread.path}`;
  }

  /** SPEC S4.4: the thread if it is in the caller's subtree, null otherwise (existence is not leaked). */
  load(scope: ControlScope, threadId: unknown): AgentThread | null {
    const caller = this.caller(scope);
    const id = parseId('thread', threadId, 'threadId');
    const record = this.records.get(id);
    return record && this.isSelfOrAncestor(caller.thread.id, id) ? record.thread : null;
  }

  /** SPEC S4.4: the caller's subtree, the caller first, then in spawn order. */
  list(scope: ControlScope): AgentThread[] {
    const caller = this.caller(scope);
    return this.threads().filter((thread) => this.isSelfOrAncestor(caller.thread.id, thread.id));
  }

  /**
   * Adds an admitted thread, live and counted in every ancestor. QuotaExceeded, changing nothing, when
   * the registry could no longer be clipped under `registryBudgetBytes` for continue-as-new.
   */
  add(record: ThreadRecord): void {
    const bytes = minimalBytes(record);
    if (this.minimalRegistryBytes + bytes > registryBudgetBytes) {
      throw quota(
        `root run ${this.rootId} holds ${this.records.size} threads: its registry would pass ${registryBudgetBytes} bytes, more than a continue-as-new can carry`,
        { limit: 'registryBytes', value: registryBudgetBytes },
      );
    }
    this.minimalRegistryBytes += bytes;
    this.records.set(record.thread.id, record);
    for (const ancestor of this.ancestors(record)) {
      ancestor.subtreeLive += 1;
      ancestor.subtreeTotal += 1;
    }
  }

  /** A thread reached a terminal status: it no longer counts as live anywhere above it. */
  threadEnded(threadId: string, status: ThreadStatus, at: string, confirmed: boolean): void {
    const record = this.records.get(threadId);
    if (!record || !isTerminal(status)) return;
    if (confirmed) record.ended = true;
    if (isTerminal(record.thread.status)) return;
    record.thread = { ...record.thread, status, updatedAt: at };
    for (const ancestor of this.ancestors(record)) ancestor.subtreeLive -= 1;
  }

  /** Marks the selected live threads cancelled (not confirmed yet) and returns them. */
  cancelLive(select: (record: ThreadRecord) => boolean, at: string): ThreadRecord[] {
    const live = this.all().filter((record) => select(record) && !isTerminal(record.thread.status));
    for (const record of live) this.threadEnded(record.thread.id, 'cancelled', at, false);
    return live;
  }

  /** Marks `top` and every live thread below it cancelled; returns them. */
  cancelSubtree(top: ThreadRecord, at: string): ThreadRecord[] {
    return this.cancelLive((record) => this.isSelfOrAncestor(top.thread.id, record.thread.id), at);
  }

  private parentOf(record: ThreadRecord): ThreadRecord | undefined {
    return record.thread.parentId ? this.records.get(record.thread.parentId) : undefined;
  }
}
