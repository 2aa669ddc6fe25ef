import { ErrorKind, KitError, parseInput } from './errors';
import { jsonBytes } from './bytes';
import { maxWaitingBytes, maxWaitingMessages, messageBytes } from './mailbox';
import { parseId, relatedId, type ThreadId } from './ids';
import type { ReconcileRequest, ReconcileResult, ShutdownReport } from './control';
import {
  AgentLimits,
  AgentThread,
  ControlScope,
  DelegationGrant,
  InterAgentMessage,
  isTerminal,
  narrowTools,
  SendMessageRequest,
  SpawnRequest,
  ThreadStatus,
  TurnOutcome,
} from './schemas';

import {
  clipRecord,
  fingerprintOf,
  fitRegistry,
  registryBudgetBytes,
  RunSnapshot,
  sameFingerprint,
  type ThreadRecord,
} from './run-snapshot';

export { canonicalJson, RootResume, RunSnapshot, ThreadRecord } from './run-snapshot';

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

export { maxWaitingBytes, maxWaitingMessages };

/** A record's bytes fully clipped, plus its share of the request index and mailbox sequence entries. */
const minimalBytes = (record: ThreadRecord) => jsonBytes(clipRecord(record, 200)) + 300;

const denied = (message: string) => new KitError(ErrorKind.PermissionDenied, message);
const quota = (message: string, details?: unknown) => new KitError(ErrorKind.QuotaExceeded, message, details);

/**
 * The state of one root run: thread registry, admission counters, grant, mailbox sequencing and the root
 * mailbox (SPEC S3, S4.1–S4.4). Pure and synchronous, so every admission decision is made in one
 * workflow activation and concurrent callers can never over-admit.
 */
export class RootRunState {
  private readonly records = new Map<string, ThreadRecord>();
  private readonly requestIndex: RunSnapshot['requestIndex'];
  private readonly recipientSeq: RunSnapshot['recipientSeq'];
  private readonly consumedSeq: RunSnapshot['consumedSeq'];
  private readonly sentBytes: RunSnapshot['sentBytes'];
  private readonly consumedBytes: RunSnapshot['consumedBytes'];
  private rootMailbox: InterAgentMessage[];
  private admissionOpen: boolean;
  private shutdownReport: ShutdownReport | undefined;
  private currentGrant: DelegationGrant;
  /** What the registry takes with every text clipped as far as `fitRegistry` goes: admission keeps it in budget. */
  private minimalRegistryBytes = 0;
  readonly rootId: ThreadId;

  constructor(snapshot: RunSnapshot) {
    this.currentGrant = snapshot.grant;
    this.rootId = snapshot.grant.rootThreadId;
    // Records are mutated in place (counters), so copy them: a snapshot must not share state with a run.
    for (const record of snapshot.records) {
      this.records.set(record.thread.id, { ...record });
      this.minimalRegistryBytes += minimalBytes(record);
    }
    this.requestIndex = { ...snapshot.requestIndex };
    this.recipientSeq = { ...snapshot.recipientSeq };
    this.consumedSeq = { ...snapshot.consumedSeq };
    this.sentBytes = { ...snapshot.sentBytes };
    this.consumedBytes = { ...snapshot.consumedBytes };
    this.rootMailbox = [...snapshot.rootMailbox];
    this.admissionOpen = snapshot.admissionOpen;
    this.shutdownReport = snapshot.shutdown;
  }

  /** A new run whose only thread is the root. */
  static create(options: {
    grant: DelegationGrant;
    name?: string | undefined;
    task: string;
    tools: string[];
    taskQueue: string;
    now: string;
  }): RootRunState {
    const { grant } = options;
    const root: AgentThread = {
      id: grant.rootThreadId,
      rootId: grant.rootThreadId,
      parentId: null,
      conversationId: relatedId('conversation', grant.rootThreadId),
      name: options.name ?? 'root',
      path: '/root',
      depth: 0,
      status: 'pending',
      taskQueue: options.taskQueue,
      task: options.task,
      tools: options.tools,
      turnsStarted: 0,
      turnsCompleted: 0,
      createdAt: options.now,
      updatedAt: options.now,
    };
    const limits = {
      maxDepth: grant.maxDepth,
      maxConcurrent: grant.maxConcurrent,
      maxTotal: grant.maxTotal,
      budgetTokens: grant.budgetTokens,
    };
    return new RootRunState({
      schemaVersion: 1,
      grant,
      records: [
        {
          thread: root,
          limits,
          subtreeLive: 0,
          subtreeTotal: 0,
          subtreeTokens: grant.spentTokens,
          fingerprint: '',
          ended: false,
        },
      ],
      requestIndex: {},
      recipientSeq: {},
      consumedSeq: {},
      sentBytes: {},
      consumedBytes: {},
      rootMailbox: [],
      admissionOpen: true,
    });
  }

  /** The state a next run starts from; the registry's texts are clipped if it would not fit (`fitRegistry`). */
  snapshot(): RunSnapshot {
    return fitRegistry({
      schemaVersion: 1,
      grant: this.grant,
      records: [...this.records.values()].map((record) => ({ ...record })),
      requestIndex: { ...this.requestIndex },
      recipientSeq: { ...this.recipientSeq },
      consumedSeq: { ...this.consumedSeq },
      sentBytes: { ...this.sentBytes },
      consumedBytes: { ...this.consumedBytes },
      rootMailbox: [...this.rootMailbox],
      admissionOpen: this.admissionOpen,
      ...(this.shutdownReport ? { shutdown: this.shutdownReport } : {}),
    });
  }

  get grant(): DelegationGrant {
    return this.currentGrant;
  }

  /** Revokes the grant: no more spawns in this run. Only the root's scope may. */
  revokeGrant(scope: ControlScope): void {
    const caller = this.caller(scope);
    if (caller.thread.id !== this.rootId)
      throw denied(`only the root may revoke the grant, not ${caller.thread.path}`);
    this.currentGrant = { ...this.currentGrant, revoked: true };
  }

  get root(): AgentThread {
    return this.records.get(this.rootId)!.thread;
  }

  /** Live threads below the root, lifetime spawns, tokens used: the counters admission checks. */
  get counters(): { live: number; total: number; tokens: number } {
    const root = this.records.get(this.rootId)!;
    return { live: root.subtreeLive, total: root.subtreeTotal, tokens: root.subtreeTokens };
  }

  get isAdmissionOpen(): boolean {
    return this.admissionOpen;
  }

  closeAdmission(): void {
    this.admissionOpen = false;
  }

  record(threadId: string): ThreadRecord | undefined {
    return this.records.get(threadId);
  }

  threads(): AgentThread[] {
    return [...this.records.values()].map((record) => record.thread);
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

  /** Whether `ancestorId` is `threadId` itself or one of its ancestors. */
  isSelfOrAncestor(ancestorId: string, threadId: string): boolean {
    for (let current = this.records.get(threadId); current; current = this.parentOf(current)) {
      if (current.thread.id === ancestorId) return true;
    }
    return false;
  }

  /**
   * Admits a spawn (SPEC S4.1): idempotent per request id, then root open, grant not revoked, and for
   * the caller and every ancestor: depth, live threads, lifetime spawns and budget within limits.
   */
  admit(scope: ControlScope, rawRequest: unknown, placement: Placement): Admission {
    const request = parseInput(SpawnRequest, rawRequest, 'spawn request');
    const parent = this.caller(scope);
    const { requestId, ...body } = request;
    const fingerprinted = {
      caller: parent.thread.id,
      remoteTarget: placement.remoteTarget ?? null,
      request: body,
    };
    if (requestId) {
      const seen = this.requestIndex[requestId];
      if (seen) {
        if (!sameFingerprint(seen.fingerprint, fingerprinted)) {
          throw new KitError(
            ErrorKind.Conflict,
            `request ${requestId} was already used for a different spawn request`,
            {
              requestId,
              threadId: seen.threadId,
            },
          );
        }
        if (!seen.threadId) {
          throw new KitError(
            ErrorKind.Closed,
            `request ${requestId} was reconciled as never committed: it is not replayed`,
            { requestId },
          );
        }
        return { record: this.records.get(seen.threadId)!, existing: true, request };
      }
    }
    if (!this.admissionOpen)
      throw new KitError(ErrorKind.Closed, `root run ${this.rootId} is shut down: no more spawns`);
    if (this.grant.revoked) throw denied(`the delegation grant of root run ${this.rootId} is revoked`);
    if (isTerminal(parent.thread.status)) {
      throw new KitError(
        ErrorKind.Closed,
        `thread ${parent.thread.path} is ${parent.thread.status}: it cannot spawn`,
      );
    }
    const depth = parent.thread.depth + 1;
    for (let limiter: ThreadRecord | undefined = parent; limiter; limiter = this.parentOf(limiter)) {
      const where = limiter.thread.id === this.rootId ? 'root run' : `subtree ${limiter.thread.path}`;
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
    }
    const liveSibling = (name: string) =>
      this.threads().some(
        (thread) =>
          thread.parentId === parent.thread.id && thread.name === name && !isTerminal(thread.status),
      );
    // A generated name skips names a sibling took explicitly: only an explicit name can conflict.
    let generated = this.counters.total + 1;
    while (!request.name && liveSibling(`agent-${generated}`)) generated += 1;
    const name = request.name ?? `agent-${generated}`;
    if (liveSibling(name))
      throw new KitError(ErrorKind.Conflict, `${parent.thread.path} already has a live child named ${name}`);
    const requested = request.limits ?? {};
    const limits: AgentLimits = {
      maxDepth: Math.min(
        parent.limits.maxDepth,
        requested.maxDepth === undefined ? Infinity : depth + requested.maxDepth,
      ),
      maxConcurrent: Math.min(parent.limits.maxConcurrent, requested.maxConcurrent ?? Infinity),
      maxTotal: Math.min(parent.limits.maxTotal, requested.maxTotal ?? Infinity),
      budgetTokens: Math.min(parent.limits.budgetTokens, requested.budgetTokens ?? Infinity),
    };
    const thread: AgentThread = {
      id: placement.threadId,
      rootId: this.rootId,
      parentId: parent.thread.id,
      conversationId: relatedId('conversation', placement.threadId),
      name,
      path: `${parent.thread.path}/${name}`,
      depth,
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
    const fingerprint = fingerprintOf(fingerprinted);
    const record: ThreadRecord = {
      thread,
      limits,
      subtreeLive: 0,
      subtreeTotal: 0,
      subtreeTokens: 0,
      fingerprint,
      ended: false,
    };
    const bytes = minimalBytes(record);
    if (this.minimalRegistryBytes + bytes > registryBudgetBytes) {
      throw quota(
        `root run ${this.rootId} holds ${this.records.size} threads: its registry would pass ${registryBudgetBytes} bytes, more than a continue-as-new can carry`,
        { limit: 'registryBytes', value: registryBudgetBytes },
      );
    }
    this.minimalRegistryBytes += bytes;
    this.records.set(thread.id, record);
    for (let ancestor: ThreadRecord | undefined = parent; ancestor; ancestor = this.parentOf(ancestor)) {
      ancestor.subtreeLive += 1;
      ancestor.subtreeTotal += 1;
    }
    if (requestId) this.requestIndex[requestId] = { fingerprint, threadId: thread.id };
    return { record, existing: false, request };
  }

  /** What a spawn request's fingerprint covers: the caller, the remote target and the body without its id. */
  private fingerprinted(
    caller: ThreadRecord,
    request: SpawnRequest,
    remoteTarget: string | undefined,
  ): unknown {
    const { requestId: _requestId, ...body } = request;
    return { caller: caller.thread.id, remoteTarget: remoteTarget ?? null, request: body };
  }

  /** The remote target's task queue, or PermissionDenied for a target the grant does not register. */
  remoteTaskQueue(target: string): string {
    const registered = this.grant.remoteTargets[target];
    if (!registered)
      throw denied(`remote target ${target} is not registered in the grant of root run ${this.rootId}`);
    return registered.taskQueue;
  }

  /**
   * Assigns a message its id, sequence number and timestamp (SPEC S4.3). Allowed recipients: the
   * caller's ancestors and descendants; the root may message any thread of its run.
   */
  prepareMessage(
    scope: ControlScope,
    rawRequest: unknown,
    messageId: `message_${string}`,
    now: string,
  ): InterAgentMessage {
    const request = parseInput(SendMessageRequest, rawRequest, 'message');
    const sender = this.caller(scope);
    if (isTerminal(sender.thread.status)) {
      throw new KitError(
        ErrorKind.Closed,
        `thread ${sender.thread.path} is ${sender.thread.status}: it cannot send messages`,
      );
    }
    const recipient = this.records.get(request.recipient);
    const related =
      recipient &&
      recipient.thread.id !== sender.thread.id &&
      (sender.thread.id === this.rootId ||
        this.isSelfOrAncestor(recipient.thread.id, sender.thread.id) ||
        this.isSelfOrAncestor(sender.thread.id, recipient.thread.id));
    if (!recipient || !related) {
      throw denied(
        `thread ${sender.thread.path} may only message its ancestors and descendants, not ${request.recipient}`,
      );
    }
    if (isTerminal(recipient.thread.status)) {
      throw new KitError(
        ErrorKind.Closed,
        `thread ${recipient.thread.path} is ${recipient.thread.status}: it takes no more messages`,
      );
    }
    const toRoot = recipient.thread.id === this.rootId;
    const waiting = toRoot
      ? this.rootMailbox.length
      : (this.recipientSeq[recipient.thread.id] ?? 0) - (this.consumedSeq[recipient.thread.id] ?? 0);
    if (waiting >= maxWaitingMessages) {
      // Back-pressure instead of loss: every waiting message travels in the recipient's state.
      throw quota(
        `${recipient.thread.path} already has ${waiting} messages waiting for its next turn (limit ${maxWaitingMessages}): send one with triggerTurn, or wait`,
        { limit: 'waitingMessages', value: maxWaitingMessages },
      );
    }
    const bytes = messageBytes(request);
    const waitingBytes = toRoot
      ? this.rootMailbox.reduce((sum, message) => sum + messageBytes(message), 0)
      : Math.max(
          0,
          (this.sentBytes[recipient.thread.id] ?? 0) - (this.consumedBytes[recipient.thread.id] ?? 0),
        );
    if (waiting > 0 && waitingBytes + bytes > maxWaitingBytes) {
      throw quota(
        `${recipient.thread.path} already has ${waitingBytes} bytes of messages waiting for its next turn (limit ${maxWaitingBytes}): send one with triggerTurn, or wait`,
        { limit: 'waitingBytes', value: maxWaitingBytes },
      );
    }
    if (!toRoot) this.sentBytes[recipient.thread.id] = (this.sentBytes[recipient.thread.id] ?? 0) + bytes;
    const seq = (this.recipientSeq[recipient.thread.id] ?? 0) + 1;
    this.recipientSeq[recipient.thread.id] = seq;
    const message: InterAgentMessage = {
      id: messageId,
      sender: sender.thread.id,
      recipient: recipient.thread.id,
      seq,
      content: request.content,
      triggerTurn: request.triggerTurn,
      sentAt: now,
    };
    if (recipient.thread.id === this.rootId) this.rootMailbox.push(message);
    return message;
  }

  /** SPEC S3.7: drain the root mailbox in order, once. Only the root's scope may. */
  takeRootMessages(scope: ControlScope): InterAgentMessage[] {
    const caller = this.caller(scope);
    if (caller.thread.id !== this.rootId)
      throw denied(`only the root may take the root's messages, not ${caller.thread.path}`);
    const drained = this.rootMailbox;
    this.rootMailbox = [];
    return drained;
  }

  /** Root messages not yet taken, without taking them. */
  pendingRootMessages(): readonly InterAgentMessage[] {
    return this.rootMailbox;
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

  /** A turn of `threadId` started. Events about terminal threads or older turns are ignored. */
  turnStarted(
    threadId: string,
    turn: number,
    at: string,
    consumed: { seq?: number | undefined; bytes?: number | undefined } = {},
  ): void {
    if (consumed.seq !== undefined) {
      this.consumedSeq[threadId] = Math.max(this.consumedSeq[threadId] ?? 0, consumed.seq);
    }
    if (consumed.bytes !== undefined) {
      this.consumedBytes[threadId] = Math.max(this.consumedBytes[threadId] ?? 0, consumed.bytes);
    } else if (consumed.seq !== undefined && consumed.seq >= (this.recipientSeq[threadId] ?? 0)) {
      // A thread on code that does not count bytes: once it consumed every message, nothing waits.
      this.consumedBytes[threadId] = this.sentBytes[threadId] ?? 0;
    }
    const record = this.records.get(threadId);
    if (!record || isTerminal(record.thread.status) || turn <= record.thread.turnsStarted) return;
    record.thread = { ...record.thread, status: 'running', turnsStarted: turn, updatedAt: at };
  }

  /** A turn ended; its tokens are charged to the thread's subtree and every ancestor's. */
  turnEnded(threadId: string, outcome: TurnOutcome, nextStatus: 'idle' | 'running'): void {
    const record = this.records.get(threadId);
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
    for (let charged: ThreadRecord | undefined = record; charged; charged = this.parentOf(charged)) {
      charged.subtreeTokens += outcome.tokens;
    }
  }

  /**
   * SPEC S6.4: charges tokens a thread used mid-turn to it and every ancestor; once any budget on the
   * way up is used up, the caller's turn must end (QuotaExceeded) and spawns there are refused.
   */
  charge(scope: ControlScope, tokens: number): { remaining: number } {
    const caller = this.caller(scope);
    let remaining = Infinity;
    for (let charged: ThreadRecord | undefined = caller; charged; charged = this.parentOf(charged)) {
      charged.subtreeTokens += tokens;
      remaining = Math.min(remaining, charged.limits.budgetTokens - charged.subtreeTokens);
    }
    for (let limiter: ThreadRecord | undefined = caller; limiter; limiter = this.parentOf(limiter)) {
      if (limiter.subtreeTokens >= limiter.limits.budgetTokens) {
        const where = limiter.thread.id === this.rootId ? 'root run' : `subtree ${limiter.thread.path}`;
        throw quota(
          `token budget ${limiter.limits.budgetTokens} exhausted in ${where}: ${limiter.subtreeTokens} tokens used`,
          {
            limit: 'budgetTokens',
            value: limiter.limits.budgetTokens,
          },
        );
      }
    }
    return { remaining };
  }

  /** A message with triggerTurn went to `threadId`: an idle thread is running again from now on. */
  turnRequested(threadId: string): void {
    const record = this.records.get(threadId);
    if (record?.thread.status === 'idle') record.thread = { ...record.thread, status: 'running' };
  }

  /**
   * A thread reached a terminal status: it no longer counts as live anywhere above it. `confirmed` means
   * its workflow said so (or never ran); the host's own decision to close a thread is not confirmed yet.
   */
  threadEnded(threadId: string, status: ThreadStatus, at: string, confirmed: boolean): void {
    const record = this.records.get(threadId);
    if (!record || !isTerminal(status)) return;
    if (confirmed) record.ended = true;
    if (isTerminal(record.thread.status)) return;
    record.thread = { ...record.thread, status, updatedAt: at };
    for (let ancestor = this.parentOf(record); ancestor; ancestor = this.parentOf(ancestor)) {
      ancestor.subtreeLive -= 1;
    }
  }

  /** SPEC S4.6: who may interrupt `threadId` — its ancestors, and the root itself. */
  interruptTarget(scope: ControlScope, threadId: unknown): ThreadRecord {
    const caller = this.caller(scope);
    const target = this.records.get(parseId('thread', threadId, 'threadId'));
    const allowed =
      target &&
      (target.thread.id === this.rootId
        ? caller.thread.id === this.rootId
        : target.thread.id !== caller.thread.id && this.isSelfOrAncestor(caller.thread.id, target.thread.id));
    if (!target || !allowed)
      throw denied(
        `thread ${caller.thread.path} may only interrupt its descendants, not ${String(threadId)}`,
      );
    return target;
  }

  /** SPEC S4.8: marks a descendant and its live subtree cancelled; returns the threads to stop. */
  closeSubtree(scope: ControlScope, threadId: unknown, at: string): ThreadRecord[] {
    const caller = this.caller(scope);
    const target = this.records.get(parseId('thread', threadId, 'threadId'));
    if (
      !target ||
      target.thread.id === caller.thread.id ||
      !this.isSelfOrAncestor(caller.thread.id, target.thread.id)
    ) {
      throw denied(`thread ${caller.thread.path} may only close its descendants, not ${String(threadId)}`);
    }
    if (isTerminal(target.thread.status))
      throw new KitError(ErrorKind.Closed, `thread ${target.thread.path} is already ${target.thread.status}`);
    return this.cancelLive((record) => this.isSelfOrAncestor(target.thread.id, record.thread.id), at);
  }

  /** SPEC S3.5: closes admission and marks every live sub-agent cancelled; returns the threads to stop. */
  beginShutdown(at: string): ThreadRecord[] {
    this.admissionOpen = false;
    return this.cancelLive((record) => record.thread.id !== this.rootId, at);
  }

  /** Sub-agents whose end is not confirmed by their workflow. */
  unconfirmed(): ThreadRecord[] {
    return [...this.records.values()].filter((record) => record.thread.id !== this.rootId && !record.ended);
  }

  /** The shutdown report, once shutdown has finished. */
  get shutdown(): ShutdownReport | undefined {
    return this.shutdownReport;
  }

  /** Records the outcome of shutdown: every sub-agent cancelled, failed, or not confirmed. */
  finishShutdown(at: string): ShutdownReport {
    const subAgents = [...this.records.values()].filter((record) => record.thread.id !== this.rootId);
    this.shutdownReport ??= {
      cancelled: subAgents
        .filter((record) => record.ended && record.thread.status === 'cancelled')
        .map((record) => record.thread.id),
      failed: subAgents
        .filter((record) => record.thread.status === 'failed')
        .map((record) => record.thread.id),
      unconfirmed: subAgents.filter((record) => !record.ended).map((record) => record.thread.id),
      completedAt: at,
    };
    return this.shutdownReport;
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
    const caller = this.caller(scope);
    const requestId = reconcile.request.requestId;
    if (!requestId)
      throw KitError.protocol('request.requestId: reconcile needs the request id of the uncertain spawn', {
        fields: ['request.requestId'],
      });
    const seen = this.requestIndex[requestId];
    if (!seen) {
      this.requestIndex[requestId] = {
        fingerprint: fingerprintOf(this.fingerprinted(caller, reconcile.request, reconcile.remoteTarget)),
        threadId: null,
      };
      for (let ancestor: ThreadRecord | undefined = caller; ancestor; ancestor = this.parentOf(ancestor))
        ancestor.subtreeTotal += 1;
      return { result: { status: 'uncertain', reason: 'missing' }, toClose: [] };
    }
    const record = seen.threadId ? this.records.get(seen.threadId) : undefined;
    const fingerprinted = this.fingerprinted(caller, reconcile.request, reconcile.remoteTarget);
    if (!record || !sameFingerprint(seen.fingerprint, fingerprinted)) {
      return { result: { status: 'uncertain', reason: record ? 'different' : 'missing' }, toClose: [] };
    }
    if (!reconcile.reportedFailed)
      return { result: { status: 'committed', thread: record.thread }, toClose: [] };
    const toClose = isTerminal(record.thread.status)
      ? []
      : this.cancelLive(
          (candidate) => this.isSelfOrAncestor(record.thread.id, candidate.thread.id),
          new Date(0).toISOString(),
        );
    return { result: { status: 'closed', thread: record.thread }, toClose };
  }

  private cancelLive(select: (record: ThreadRecord) => boolean, at: string): ThreadRecord[] {
    const live = [...this.records.values()].filter(
      (record) => select(record) && !isTerminal(record.thread.status),
    );
    for (const record of live) this.threadEnded(record.thread.id, 'cancelled', at, false);
    return live;
  }

  private parentOf(record: ThreadRecord): ThreadRecord | undefined {
    return record.thread.parentId ? this.records.get(record.thread.parentId) : undefined;
  }
}
