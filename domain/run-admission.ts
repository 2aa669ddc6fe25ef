import type { ReconcileRequest, ReconcileResult } from './control';
import { KitError, parseInput } from './errors';
import { relatedId, type ThreadId } from './ids';
import { closed, conflict, denied, quota } from './run-errors';
import {
  fingerprintOf,
  maxTombstones,
  type RunSnapshot,
  sameFingerprint,
  type ThreadRecord,
} from './run-snapshot';
import { AgentThread, ControlScope, DelegationGrant, isTerminal, narrowTools, SpawnRequest } from './schemas';
import { checkSpawnLimits, childLimits, childName } from './spawn-limits';
import type { ThreadRegistry } from './thread-registry';

/** Where a newly admitted thread runs. */
export interface Placement {
  threadId: ThreadId;
  taskQueue: string;
  remoteTarget?: string | undefined;
  now: string;
}

/** The outcome of an admission: the thread, and whether it already existed (same request id). */
export interface Admission {
  record: ThreadRecord;
  existing: boolean;
  request: SpawnRequest;
}

/** What a spawn request's fingerprint covers: the caller, the remote target and the body without its id. */
function fingerprinted(
  caller: ThreadRecord,
  request: SpawnRequest,
  remoteTarget: string | undefined,
): unknown {
  const { requestId: _requestId, ...body } = request;
  return { caller: caller.thread.id, remoteTarget: remoteTarget ?? null, request: body };
}

/**
 * Admission to a root run (SPEC S3.6, S4.1): the grant, whether the run still admits, and the request
 * index that makes a spawn idempotent per request id and lets reconcile settle an uncertain one.
 */
export class RunAdmission {
  private open: boolean;
  private currentGrant: DelegationGrant;
  private readonly requestIndex: RunSnapshot['requestIndex'];

  constructor(
    private readonly registry: ThreadRegistry,
    snapshot: Pick<RunSnapshot, 'grant' | 'requestIndex' | 'admissionOpen'>,
  ) {
    this.currentGrant = snapshot.grant;
    // Admitted requests are found from their records (each keeps its request id); the snapshot's index
    // carries only tombstones, at most {@link maxTombstones}.
    this.requestIndex = { ...snapshot.requestIndex };
    for (const record of registry.all())
      if (record.requestId)
        this.requestIndex[record.requestId] = { fingerprint: record.fingerprint, threadId: record.thread.id };
    this.open = snapshot.admissionOpen;
  }

  get grant(): DelegationGrant {
    return this.currentGrant;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The request index as a snapshot carries it: its tombstones (records keep their own request ids). */
  requestIndexSnapshot(): RunSnapshot['requestIndex'] {
    return Object.fromEntries(Object.entries(this.requestIndex).filter(([, seen]) => seen.threadId === null));
  }

  private get tombstones(): number {
    return Object.values(this.requestIndex).filter((seen) => seen.threadId === null).length;
  }

  close(): void {
    this.open = false;
  }

  /** Revokes the grant: no more spawns in this run. Only the root's scope may. */
  revokeGrant(scope: ControlScope): void {
    const caller = this.registry.caller(scope);
    if (caller.thread.id !== this.registry.rootId)
      throw denied(`only the root may revoke the grant, not ${caller.thread.path}`);
    this.currentGrant = { ...this.currentGrant, revoked: true };
  }

  /** The remote target's task queue, or PermissionDenied for a target the grant does not register. */
  remoteTaskQueue(target: string): string {
    const registered = this.grant.remoteTargets[target];
    if (!registered)
      throw denied(
        `remote target ${target} is not registered in the grant of root run ${this.registry.rootId}`,
      );
    return registered.taskQueue;
  }

  /**
   * SPEC S4.1: idempotent per request id, then run open, grant not revoked, caller not terminal, quotas
   * (`checkSpawnLimits`), name, and room in the registry. A refusal changes nothing.
   */
  admit(scope: ControlScope, rawRequest: unknown, placement: Placement): Admission {
    const request = parseInput(SpawnRequest, rawRequest, 'spawn request');
    const parent = this.registry.caller(scope);
    const { requestId } = request;
    const covered = fingerprinted(parent, request, placement.remoteTarget);
    const seen = requestId ? this.requestIndex[requestId] : undefined;
    if (requestId && seen) {
      if (!sameFingerprint(seen.fingerprint, covered)) {
        throw conflict(`request ${requestId} was already used for a different spawn request`, {
          requestId,
          threadId: seen.threadId,
        });
      }
      if (!seen.threadId)
        throw closed(`request ${requestId} was reconciled as never committed: it is not replayed`, {
          requestId,
        });
      return { record: this.registry.get(seen.threadId)!, existing: true, request };
    }
    const { rootId } = this.registry;
    if (!this.open) throw closed(`root run ${rootId} is shut down: no more spawns`);
    if (this.grant.revoked) throw denied(`the delegation grant of root run ${rootId} is revoked`);
    if (isTerminal(parent.thread.status))
      throw closed(`thread ${parent.thread.path} is ${parent.thread.status}: it cannot spawn`);
    checkSpawnLimits(this.registry, parent);
    const name = childName(this.registry, parent, request.name);
    const limits = childLimits(parent, request.limits);
    const thread: AgentThread = {
      id: placement.threadId,
      rootId,
      parentId: parent.thread.id,
      conversationId: relatedId('conversation', placement.threadId),
      name,
      path: `${parent.thread.path}/${name}`,
      depth: parent.thread.depth + 1,
      status: 'pending',
      taskQueue: placement.taskQueue,
      ...(placement.remoteTarget ? { remoteTarget: placement.remoteTarget } : {}),
      task: request.task,
      // A child never gets a tool its parent lacks.
      tools: narrowTools(parent.thread.tools, request.tools),
      turnsStarted: 0,
      turnsCompleted: 0,
      createdAt: placement.now,
      updatedAt: placement.now,
    };
    const fingerprint = fingerprintOf(covered);
    const record: ThreadRecord = {
      thread,
      limits,
      subtreeLive: 0,
      subtreeTotal: 0,
      subtreeTokens: 0,
      held: 0,
      fingerprint,
      ended: false,
      ...(requestId ? { requestId } : {}),
    };
    this.registry.add(record);
    if (requestId) this.requestIndex[requestId] = { fingerprint, threadId: thread.id };
    return { record, existing: false, request };
  }

  /**
   * SPEC S3.6: an exact committed match returns the thread — closed when the caller already reported its
   * request failed, so it is never replayed. A missing or different record stays uncertain; a missing one
   * leaves a tombstone that keeps the lifetime quota and refuses a late copy of the request.
   */
  reconcile(
    scope: ControlScope,
    reconcile: ReconcileRequest,
  ): { result: ReconcileResult; toClose: ThreadRecord[] } {
    const caller = this.registry.caller(scope);
    const requestId = reconcile.request.requestId;
    if (!requestId)
      throw KitError.protocol('request.requestId: reconcile needs the request id of the uncertain spawn', {
        fields: ['request.requestId'],
      });
    const seen = this.requestIndex[requestId];
    const covered = fingerprinted(caller, reconcile.request, reconcile.remoteTarget);
    if (!seen) {
      if (this.tombstones >= maxTombstones)
        throw quota(
          `root run ${this.registry.rootId} already holds ${maxTombstones} requests reconciled as missing: no more fit in its continue-as-new state`,
          { limit: 'reconcileTombstones', value: maxTombstones },
        );
      this.requestIndex[requestId] = { fingerprint: fingerprintOf(covered), threadId: null };
      for (const ancestor of this.registry.selfAndAncestors(caller)) ancestor.subtreeTotal += 1;
      return { result: { status: 'uncertain', reason: 'missing' }, toClose: [] };
    }
    const record = seen.threadId ? this.registry.get(seen.threadId) : undefined;
    if (!record || !sameFingerprint(seen.fingerprint, covered)) {
      return { result: { status: 'uncertain', reason: record ? 'different' : 'missing' }, toClose: [] };
    }
    if (!reconcile.reportedFailed)
      return { result: { status: 'committed', thread: record.thread }, toClose: [] };
    const toClose = isTerminal(record.thread.status)
      ? []
      : this.registry.cancelSubtree(record, new Date(0).toISOString());
    return { result: { status: 'closed', thread: record.thread }, toClose };
  }
}
