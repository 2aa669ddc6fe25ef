import type { ReconcileRequest, ReconcileResult, ShutdownReport, ThreadEvent } from './control';
import { relatedId, type ThreadId } from './ids';
import { type Mailbox, maxWaitingBytes, maxWaitingMessages } from './mailbox';
import { type Admission, type Placement, RunAdmission } from './run-admission';
import { RunMessaging } from './run-messaging';
import { RunShutdown } from './run-shutdown';
import { fitRegistry, RunSnapshot, type ThreadRecord } from './run-snapshot';
import * as turns from './run-turns';
import {
  AgentThread,
  ControlScope,
  DelegationGrant,
  InterAgentMessage,
  SendMessageRequest,
  ThreadStatus,
  toMicroUsd,
  TurnOutcome,
} from './schemas';
import { ThreadRegistry } from './thread-registry';
import { addUsage, mergeLedger, type CallUsage, type UsageLedger } from './usage';

export { canonicalJson, RootResume, RunSnapshot, ThreadRecord } from './run-snapshot';
export type { Admission, Placement } from './run-admission';
export { maxWaitingBytes, maxWaitingMessages };

/**
 * The state of one root run: thread registry, admission counters, grant, mailbox sequencing and the root
 * mailbox (SPEC S3, S4.1–S4.4). Pure and synchronous, so every admission decision is made in one
 * workflow activation and concurrent callers can never over-admit. A façade over one part per concern:
 * `ThreadRegistry`, `RunAdmission` (with `spawn-limits`), `run-turns`, `RunMessaging` and `RunShutdown`.
 */
export class RootRunState {
  private readonly registry: ThreadRegistry;
  private readonly admission: RunAdmission;
  private readonly messaging: RunMessaging;
  private readonly stopping: RunShutdown;
  readonly rootId: ThreadId;
  /** SPEC S11.3: the tree's usage, from its threads' reports, and the root thread's own. */
  readonly usage: { tree: UsageLedger; root: UsageLedger };

  constructor(snapshot: RunSnapshot) {
    this.usage = snapshot.usage ?? { tree: {}, root: {} };
    this.rootId = snapshot.grant.rootThreadId;
    this.registry = new ThreadRegistry(this.rootId, snapshot.records);
    this.admission = new RunAdmission(this.registry, snapshot);
    this.messaging = new RunMessaging(this.registry, snapshot);
    this.stopping = new RunShutdown(this.registry, snapshot.shutdown);
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
      ...(grant.budgetUsd === undefined ? {} : { budgetMicroUsd: toMicroUsd(grant.budgetUsd) }),
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
          held: 0,
          ...(grant.budgetUsd === undefined ? {} : { subtreeMicroUsd: 0, heldMicroUsd: 0 }),
          fingerprint: '',
          ended: false,
        },
      ],
      requestIndex: {},
      rootMailbox: { nextSeq: 1, ready: [], consumedLog: [], receivedCount: 0 },
      admissionOpen: true,
    });
  }

  /** The state a next run starts from; the registry's texts are clipped if it would not fit (`fitRegistry`). */
  snapshot(): RunSnapshot {
    const shutdown = this.stopping.shutdown;
    // Key order is part of the contract: the same state must give byte-identical JSON.
    return fitRegistry({
      schemaVersion: 1,
      grant: this.grant,
      records: this.registry.snapshot(),
      requestIndex: this.admission.requestIndexSnapshot(),
      ...this.messaging.snapshot(),
      admissionOpen: this.admission.isOpen,
      ...(shutdown ? { shutdown } : {}),
      ...(Object.keys(this.usage.tree).length > 0 ? { usage: this.usage } : {}),
    });
  }

  get grant(): DelegationGrant {
    return this.admission.grant;
  }

  /** Revokes the grant: no more spawns in this run. Only the root's scope may. */
  revokeGrant(scope: ControlScope): void {
    this.admission.revokeGrant(scope);
  }

  get root(): AgentThread {
    return this.registry.rootRecord.thread;
  }

  /** Live threads below the root, lifetime spawns, tokens used: the counters admission checks. */
  get counters(): { live: number; total: number; tokens: number } {
    return this.registry.counters();
  }

  get isAdmissionOpen(): boolean {
    return this.admission.isOpen;
  }

  closeAdmission(): void {
    this.admission.close();
  }

  record(threadId: string): ThreadRecord | undefined {
    return this.registry.get(threadId);
  }

  threads(): AgentThread[] {
    return this.registry.threads();
  }

  /** The calling thread for a scope; the scope must belong to this run and name one of its threads. */
  caller(rawScope: ControlScope): ThreadRecord {
    return this.registry.caller(rawScope);
  }

  /** Whether `ancestorId` is `threadId` itself or one of its ancestors. */
  isSelfOrAncestor(ancestorId: string, threadId: string): boolean {
    return this.registry.isSelfOrAncestor(ancestorId, threadId);
  }

  /**
   * Admits a spawn (SPEC S4.1): idempotent per request id, then root open, grant not revoked, and for
   * the caller and every ancestor: depth, live threads, lifetime spawns and budget within limits.
   */
  admit(scope: ControlScope, rawRequest: unknown, placement: Placement): Admission {
    return this.admission.admit(scope, rawRequest, placement);
  }

  /** The remote target's task queue, or PermissionDenied for a target the grant does not register. */
  remoteTaskQueue(target: string): string {
    return this.admission.remoteTaskQueue(target);
  }

  /** The root's own mailbox: its workflow serves client messages to it like any thread's (SPEC S3.1). */
  get rootMailbox(): Mailbox {
    return this.messaging.rootMailbox;
  }

  /** SPEC S4.3: whether the caller may message the recipient (PermissionDenied, Closed); changes nothing. */
  checkMessage(scope: ControlScope, request: SendMessageRequest): void {
    this.messaging.check(scope, request);
  }

  /** SPEC S3.7: drain the root mailbox in order, once. Only the root's scope may. */
  takeRootMessages(scope: ControlScope): InterAgentMessage[] {
    return this.messaging.takeRoot(scope, this.root.turnsStarted);
  }

  /** Root messages not yet taken, without taking them. */
  pendingRootMessages(): readonly InterAgentMessage[] {
    return this.messaging.pendingRoot();
  }

  /** SPEC S4.4: the thread if it is in the caller's subtree, null otherwise (existence is not leaked). */
  load(scope: ControlScope, threadId: unknown): AgentThread | null {
    return this.registry.load(scope, threadId);
  }

  /** SPEC S4.4: the caller's subtree, the caller first, then in spawn order. */
  list(scope: ControlScope): AgentThread[] {
    return this.registry.list(scope);
  }

  /** Applies an agent's (proven) report about itself; `outcomeCharged` in runs with `turnTokens` (turnEnded). */
  applyEvent(event: ThreadEvent, outcomeCharged = false): void {
    switch (event.type) {
      case 'turn-start':
        return this.turnStarted(event.threadId, event.turn, event.at);
      case 'turn-end':
        if (event.spentTokens) this.spent(event.threadId, event.spentTokens);
        if (event.spentMicroUsd) this.spent(event.threadId, event.spentMicroUsd, 'microUsd');
        if (event.usage) mergeLedger(this.usage.tree, event.usage);
        return this.turnEnded(event.threadId, event.outcome, event.nextStatus, outcomeCharged);
      case 'thread-end':
        if (event.unusedTokens) this.refund(event.threadId, event.unusedTokens);
        if (event.unusedMicroUsd) this.refund(event.threadId, event.unusedMicroUsd, 'microUsd');
        return this.threadEnded(event.threadId, event.status, event.at, true);
    }
  }

  /** A turn of `threadId` started. Events about terminal threads or older turns are ignored. */
  turnStarted(threadId: string, turn: number, at: string): void {
    turns.turnStarted(this.registry, threadId, turn, at);
  }

  /** A turn ended (domain/run-turns.ts `turnEnded`). */
  turnEnded(
    threadId: string,
    outcome: TurnOutcome,
    nextStatus: 'idle' | 'running',
    outcomeCharged = false,
  ): void {
    turns.turnEnded(this.registry, threadId, outcome, nextStatus, outcomeCharged);
  }

  /**
   * SPEC S6.4: charges tokens a thread used mid-turn to it and every ancestor; once any budget on the
   * way up is used up, the caller's turn must end (QuotaExceeded) and spawns there are refused.
   */
  charge(scope: ControlScope, tokens: number): { remaining: number } {
    return turns.charge(this.registry, this.registry.caller(scope), tokens);
  }

  /** SPEC S6.4: the root's own turn reports `tokens` at once (`turns.chargeReported`). */
  chargeReported(scope: ControlScope, tokens: number): { endsTurn?: unknown } {
    return turns.chargeReported(this.registry, this.registry.caller(scope), tokens);
  }

  /**
   * SPEC S6.4: sets tokens (or micro-dollars, `unit`) aside for the caller to spend without asking per
   * call (`turns.reserve`).
   */
  reserve(
    scope: ControlScope,
    request: Parameters<typeof turns.reserve>[2],
  ): { granted: number; remaining: number } {
    return turns.reserve(this.registry, this.registry.caller(scope), request);
  }

  /** SPEC S11.3: the root's own model call holds `amount` before it starts (`turns.reserveCall`). */
  reserveCall(scope: ControlScope, amount: number, unit?: turns.BudgetUnit): void {
    turns.reserveCall(this.registry, this.registry.caller(scope), amount, unit);
  }

  /** The root's call that held `reserved` used `used`. */
  settleCall(scope: ControlScope, reserved: number, used: number, unit?: turns.BudgetUnit): void {
    turns.settleCall(this.registry, this.registry.caller(scope), reserved, used, unit);
  }

  /** SPEC S11.3: whether `threadId`'s model calls are held to a budget in dollars (its own or an ancestor's). */
  hasDollarBudget(threadId: string): boolean {
    return this.registry.get(threadId)?.limits.budgetMicroUsd !== undefined;
  }

  /** What one of the root thread's own model calls used, in its ledger and the tree's. */
  recordRootUsage(model: string, usage: CallUsage): void {
    addUsage(this.usage.root, model, usage);
    addUsage(this.usage.tree, model, usage);
  }

  /** A thread reported what it spent of the tokens it holds. */
  spent(threadId: string, amount: number, unit?: turns.BudgetUnit): void {
    turns.spent(this.registry.get(threadId), amount, unit);
  }

  /** A thread's ancestors, the root first (what its capability proves, SPEC S3.9). */
  lineageOf(threadId: string): ThreadId[] {
    const lineage = [...this.registry.selfAndAncestors(this.registry.get(threadId))].map(
      (record) => record.thread.id,
    );
    return lineage.slice(1).reverse();
  }

  /** Gives back tokens (or micro-dollars) a thread set aside and did not use. */
  refund(threadId: string, amount: number, unit?: turns.BudgetUnit): void {
    turns.refund(this.registry, threadId, amount, unit);
  }

  /** A message with triggerTurn went to `threadId`: an idle thread is running again from now on. */
  turnRequested(threadId: string): void {
    turns.turnRequested(this.registry, threadId);
  }

  /**
   * A thread reached a terminal status: it no longer counts as live anywhere above it. `confirmed` means
   * its workflow said so (or never ran); the host's own decision to close a thread is not confirmed yet.
   */
  threadEnded(threadId: string, status: ThreadStatus, at: string, confirmed: boolean): void {
    this.registry.threadEnded(threadId, status, at, confirmed);
  }

  /** SPEC S4.6: who may interrupt `threadId` — its ancestors, and the root itself. */
  interruptTarget(scope: ControlScope, threadId: unknown): ThreadRecord {
    return this.stopping.interruptTarget(scope, threadId);
  }

  /** SPEC S4.8: marks a descendant and its live subtree cancelled; returns the threads to stop. */
  closeSubtree(scope: ControlScope, threadId: unknown, at: string): ThreadRecord[] {
    return this.stopping.closeSubtree(scope, threadId, at);
  }

  /** The live threads below `threadId`. */
  liveBelow(threadId: string): ThreadRecord[] {
    return this.stopping.liveBelow(threadId);
  }

  /** Marks the live threads below `threadId` cancelled (it ended by itself); returns the threads to stop. */
  closeBelow(threadId: string, at: string): ThreadRecord[] {
    return this.stopping.closeBelow(threadId, at);
  }

  /** SPEC S3.5: closes admission and marks every live sub-agent cancelled; returns the threads to stop. */
  beginShutdown(at: string): ThreadRecord[] {
    this.admission.close();
    return this.stopping.begin(at);
  }

  /** Sub-agents whose end is not confirmed by their workflow. */
  unconfirmed(): ThreadRecord[] {
    return this.stopping.unconfirmed();
  }

  /** The shutdown report, once shutdown has finished. */
  get shutdown(): ShutdownReport | undefined {
    return this.stopping.shutdown;
  }

  /** Records the outcome of shutdown: every sub-agent cancelled, failed, or not confirmed. */
  finishShutdown(at: string): ShutdownReport {
    return this.stopping.finish(at);
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
    return this.admission.reconcile(scope, reconcile);
  }
}
