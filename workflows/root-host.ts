import { condition, getExternalWorkflowHandle, log, uuid4, workflowInfo } from '@temporalio/workflow';
import { rootCapability, type Capability } from '../domain/capability';
import {
  ControlOperation,
  errorAnswer,
  ReconcileRequest,
  type AgentInterruptReceipt,
  type ControlOperationInput,
  type ControlRequest,
  type OutboxItem,
  type ControlResults,
  type ReconcileResult,
  type ShutdownReport,
} from '../domain/control';
import { RecentAnswerLog, rootRememberedAnswers } from '../domain/recent-answers';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { newId } from '../domain/ids';
import { isThreadOperation, ownerOf } from '../domain/operations';
import { closeThreadSignal, controlResponseSignal } from '../domain/messages';
import type { RootRunState, ThreadRecord } from '../domain/run-state';
import type { AgentSpec, AgentThread, ControlScope } from '../domain/schemas';
import { ControlTransport } from './control-transport';
import { RunLifetime } from './run-lifetime';
import { resolveRefusal, rootControlsOf, sendFromRoot, waitForTurns } from './root-controls';
import type { TreeApprovalPolicy } from './tree-approval-policy';
import { rootThreadStarter, type ThreadStarter } from './thread-starter';
import type { TaskBudget } from './task-budget';
import type { ThreadOperations } from './thread-operations';
import { RootCarry, type CarriedIn } from './root-carry';
import { OutsideEnds } from './outside-ends';
import { fittedAnswer } from '../domain/answer-bounds';
import { threadSpawned } from './workflow-metrics';

/**
 * Performs control operations for a root run (SPEC S4): decisions are made synchronously on the
 * RootRunState, side effects (child starts, deliveries, answers to agents) follow in the background,
 * tracked so the run can drain them before it returns or continues-as-new.
 */
export class RootHost {
  private readonly background = new Set<Promise<void>>();
  private readonly started = new Map<string, Promise<void>>();

  /** When the run continues as new; while it is releasing, control requests queue up and long polls answer early. */
  readonly lifetime: RunLifetime;
  private readonly carry: RootCarry;
  private shutdownDone: Promise<ShutdownReport> | undefined;
  private rootThread: Pick<ThreadOperations, 'perform'> | undefined;
  private readonly starter: ThreadStarter;
  /** Threads that ended outside agents-kit (workflows/outside-ends.ts). */
  readonly outside: OutsideEnds;

  constructor(
    readonly state: RootRunState,
    private readonly root: {
      interrupt(): { cancellationRequested: boolean; interruptedTurn?: number };
      stop(): void;
      /** Runs what the run's ending waits for out of a cancel request's reach (workflows/cancel-request.ts). */
      shield<Result>(work: () => Promise<Result>): Promise<Result>;
      /** The root turn whose kernel may use root controls; older contexts are stale (SPEC S3.8). */
      currentTurn(): number;
      /** A child of the root was spawned (SPEC S5.1: a status in the root's conversation). */
      spawned(thread: AgentThread): void;
    },
    readonly options: {
      shutdownGraceMs: number;
      continueAsNewAfterEvents: number;
      runKey: string;
      operations: number;
      answers: TaskBudget;
      usageLedger?: boolean; // SPEC S11.3: model calls hold reservations (RootRunInput.usageLedger)
      callSizedAllowance?: boolean; // SPEC S6.4 (RootRunInput.callSizedAllowance)
      transcriptDelta?: boolean; // RootRunInput.transcriptDelta
      turnTokens?: boolean; // SPEC S6.4 (RootRunInput.turnTokens)
      approvalPolicy?: TreeApprovalPolicy | undefined; // SPEC S11.4 (RootRunInput.approvalPolicy)
    },
    carried: CarriedIn = { queued: [], outbox: [] },
  ) {
    this.lifetime = new RunLifetime(options.continueAsNewAfterEvents);
    this.carry = new RootCarry(this.lifetime);
    this.starter = rootThreadStarter(
      this.state,
      () => ({
        protocolVersion: 1,
        runKey: this.options.runKey,
        idleTimeoutMs: this.state.grant.idleTimeoutMs,
        interactionTimeoutMs: this.state.grant.interactionTimeoutMs,
        conversationRetentionMs: this.state.grant.conversationRetentionMs,
        continueAsNewAfterEvents: this.options.continueAsNewAfterEvents,
        ...(this.options.usageLedger ? { usageLedger: true as const } : {}),
        ...(this.options.callSizedAllowance ? { callSizedAllowance: true as const } : {}),
        ...(this.options.transcriptDelta ? { transcriptDelta: true as const } : {}),
        ...(this.options.turnTokens ? { turnTokens: true as const } : {}),
        ...(this.options.approvalPolicy ? { approvalPolicy: this.options.approvalPolicy.policy } : {}),
      }),
      options.answers,
      (threadId) => this.outside.closed(threadId),
    );
    this.outside = new OutsideEnds(state, options.runKey, this, this.started);
    this.self = rootCapability(options.runKey, state.rootId);
    this.transport = new ControlTransport(
      () => this.self,
      options.runKey,
      options.operations,
      options.answers,
    );
    this.recent = new RecentAnswerLog(carried.recent, rootRememberedAnswers);
    for (const item of carried.outbox) this.perform(item);
    for (const request of carried.queued) this.accept(request);
  }

  /** The root thread's capability: what the root run proves its signals with (SPEC S3.9). */
  readonly self: Capability;
  /** The root run's requests to the threads that own an operation (SPEC S3.1). */
  readonly transport: ControlTransport;
  /** Updates and requests applied lately, so a retry on the next run is answered, not applied again. */
  readonly recent: RecentAnswerLog;

  /** Control requests and side effects that arrived while releasing, to carry into the next run. */
  get carried(): Required<CarriedIn> & { operations: number } {
    return { ...this.carry.kept(), recent: this.recent.snapshot(), operations: this.transport.operations };
  }

  /** Stays in this run after releasing (SPEC S3.5): kept side effects are done; kept requests returned. */
  stay(): ControlRequest[] {
    return this.carry.giveBack((item) => this.perform(item));
  }

  /**
   * Performs a side effect now, or — while the run prepares to continue-as-new — keeps it for the next
   * run, so a steady stream of requests can never keep the run from continuing-as-new.
   */
  private perform(item: OutboxItem): void {
    if (this.carry.keepEffect(item)) return;
    switch (item.type) {
      case 'start':
        return this.startThread(this.state.record(item.threadId)!, item.spec);
      case 'close':
        return this.signalThread(item.threadId, (handle) =>
          handle.signal(closeThreadSignal, { from: this.self, reason: 'closed' }).catch((error: unknown) => {
            if (!this.outside.closeFailed(item.threadId, error)) throw error;
          }),
        );
      case 'respond':
        return this.track(
          getExternalWorkflowHandle(item.callerId)
            .signal(controlResponseSignal, item.response)
            .catch((error: unknown) =>
              log.warn('answer to agent failed', { callerId: item.callerId, error: String(error) }),
            ),
        );
    }
  }

  /**
   * Takes a proven control request (the caller checked the proof): answered now, or queued while the run
   * is about to continue-as-new. A request id seen lately is answered as it was, not applied again.
   */
  accept(request: ControlRequest): void {
    if (!this.carry.keepRequest(request)) this.answer(request);
  }

  /**
   * SPEC S4.6: the root's own turn is interrupted here; any other thread's by its own workflow (SPEC
   * S3.1), which the root's controls ask directly.
   */
  async interrupt(scope: ControlScope, threadId: unknown): Promise<AgentInterruptReceipt> {
    const target = this.state.interruptTarget(scope, threadId);
    if (target.thread.id === this.state.rootId) return { thread: target.thread.id, ...this.root.interrupt() };
    // Asked here by a thread only when the target's workflow is gone: nothing runs there to cancel.
    if (scope.threadId !== this.state.rootId)
      return { thread: target.thread.id, cancellationRequested: false };
    return (await this.transport.call(target.thread.id, {
      type: 'interrupt',
      threadId: target.thread.id,
    })) as AgentInterruptReceipt;
  }

  /** SPEC S4.8: the closed threads (the target and its live subtree). */
  close(scope: ControlScope, threadId: unknown): AgentThread[] {
    const closed = this.state.closeSubtree(scope, threadId, new Date().toISOString());
    this.stopThreads(closed);
    return closed.map((record) => this.state.record(record.thread.id)!.thread);
  }

  /** SPEC S3.6. */
  reconcile(scope: ControlScope, rawRequest: unknown): ReconcileResult {
    const { result, toClose } = this.state.reconcile(
      scope,
      parseInput(ReconcileRequest, rawRequest, 'reconcile request'),
    );
    this.stopThreads(toClose);
    return result;
  }

  /**
   * SPEC S3.5: closes admission, stops the root's turns and every sub-agent, and resolves once each has
   * confirmed its end or the grace period is over. Every caller gets the same report.
   */
  shutdown(): Promise<ShutdownReport> {
    if (this.state.shutdown) return Promise.resolve(this.state.shutdown);
    if (!this.shutdownDone) {
      this.root.stop();
      this.stopThreads(this.state.beginShutdown(new Date().toISOString()));
      this.shutdownDone = this.root.shield(async () => {
        await condition(() => this.state.unconfirmed().length === 0, this.options.shutdownGraceMs);
        return this.state.finishShutdown(new Date().toISOString());
      });
    }
    return this.shutdownDone;
  }

  get shuttingDown(): boolean {
    return this.shutdownDone !== undefined || this.state.shutdown !== undefined;
  }

  /** Closes the threads' workflows (their records are marked already). */
  stopThreads(records: ThreadRecord[]): void {
    for (const record of records) this.perform({ type: 'close', threadId: record.thread.id });
  }

  /** Signals a thread's workflow once it has started; a thread that is gone already is not an error. */
  signalThread(
    threadId: string,
    signal: (handle: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>,
  ): void {
    const started = this.started.get(threadId) ?? Promise.resolve();
    this.track(
      started.then(() =>
        signal(getExternalWorkflowHandle(threadId)).catch((error: unknown) =>
          log.warn('signal to thread failed', { threadId, error: String(error) }),
        ),
      ),
    );
  }

  /** Executes one operation for `scope`; throws KitError on rejection. */
  async execute<Type extends keyof ControlResults>(
    scope: ControlScope,
    rawOperation: ControlOperationInput & { type: Type },
  ): Promise<ControlResults[Type]> {
    return (await this.dispatch(scope, rawOperation)) as ControlResults[Type];
  }

  /** `request`: the tree's request it came in, when it did (root controls are the root's own). */
  private async dispatch(
    scope: ControlScope,
    rawOperation: unknown,
    request?: ControlRequest,
  ): Promise<ControlResults[keyof ControlResults]> {
    const operation = parseInput(ControlOperation, rawOperation, 'control operation');
    // SPEC S3.10: an answer fits one payload, and the answers of one workflow task fit the task.
    return this.options.answers.fit(
      fittedAnswer(operation.type, await this.operate(scope, operation, request)),
    );
  }

  private async operate(
    scope: ControlScope,
    operation: ControlOperation,
    request?: ControlRequest,
  ): Promise<ControlResults[keyof ControlResults]> {
    // SPEC S3.1: the root is a thread like any other; its own operations take the same path as theirs.
    if (request && this.ownedByRootThread(operation)) return this.asRootThread(request);
    switch (operation.type) {
      case 'spawn':
        return this.spawn(scope, operation.request, undefined);
      case 'spawn-remote': {
        const { target, ...request } = operation.request;
        return this.spawn(scope, request, target);
      }
      case 'send-message':
        return sendFromRoot(this, scope, operation.request);
      case 'load-thread':
        return this.state.load(scope, operation.threadId);
      case 'list-threads':
        return this.state.list(scope);
      case 'wait':
        return waitForTurns(this.state, scope, operation.request, this.lifetime, this.outside);
      case 'interrupt':
        return this.interrupt(scope, operation.threadId);
      case 'close':
        return this.close(scope, operation.threadId);
      case 'resolve':
        throw resolveRefusal(this.state.rootId, scope, operation.threadId);
      case 'charge':
        return this.state.charge(scope, operation.tokens);
      case 'reserve':
        return this.state.reserve(scope, operation);
      case 'remember-approval':
        if (!this.options.approvalPolicy)
          throw new KitError(ErrorKind.Unsupported, 'this run has no approval policy: nothing is remembered');
        return this.options.approvalPolicy.remember(operation.tool, operation.by);
    }
  }

  /** Controls for the root kernel, bound to the root's scope and to its turn `turn` (SPEC S3.8). */
  readonly rootControls = rootControlsOf(this, () => this.root.currentTurn());

  /** Answers a control request by signal, whatever the outcome; a repeated request id gets the same answer. */
  private answer(request: ControlRequest): void {
    const scope = { rootId: this.state.rootId, threadId: request.from.threadId };
    const key = `${request.from.threadId}|${request.operationId}`;
    this.track(
      (async () => {
        let response;
        try {
          // The root thread's own operations remember their answers themselves, as every thread's do.
          const earlier = this.ownedByRootThread(request.operation)
            ? undefined
            : this.recent.find(key, request.operation);
          const result =
            earlier !== undefined ? earlier : await this.dispatch(scope, request.operation, request);
          // Spawns are remembered: a repeat must not admit a second thread. Reads and waits need not be.
          if (request.operation.type === 'spawn' || request.operation.type === 'spawn-remote')
            this.recent.remember(key, request.operation, result);
          response = { from: this.self, operationId: request.operationId, result };
        } catch (error) {
          response = { from: this.self, operationId: request.operationId, error: errorAnswer(error) };
        }
        this.perform({ type: 'respond', callerId: request.from.threadId, response });
      })(),
    );
  }

  /** No background side effect is in flight. */
  get idle(): boolean {
    return this.background.size === 0;
  }

  /** Waits for every background side effect started so far (and any they start). */
  async drain(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  private async spawn(
    scope: ControlScope,
    request: unknown,
    remoteTarget: string | undefined,
  ): Promise<AgentThread> {
    const taskQueue = remoteTarget ? this.state.remoteTaskQueue(remoteTarget) : workflowInfo().taskQueue;
    const placement = {
      threadId: newId('thread', uuid4),
      taskQueue,
      remoteTarget,
      now: new Date().toISOString(),
    };
    // Refused for room while threads of earlier runs count live, it asks whether they still run first.
    const admitting = this.outside.admit(() => this.state.admit(scope, request, placement));
    // Awaited only when the ask runs: one more await on the happy path would let other handlers' commands
    // in before this start, and histories recorded before the ask existed would no longer replay.
    const admission = admitting instanceof Promise ? await admitting : admitting;
    const { record, request: admitted } = admission;
    if (!admission.existing) {
      threadSpawned();
      const { task, name, instructions, model, kernel, history } = admitted;
      this.perform({
        type: 'start',
        threadId: record.thread.id,
        spec: { task, name, instructions, model, kernel, history, tools: record.thread.tools },
      });
    }
    // Answered once the thread's workflow exists, so the caller can message it at once (a start carried
    // into the next run is not waited for: that run makes it).
    await this.started.get(record.thread.id);
    const thread = this.state.record(record.thread.id)!.thread;
    if (!admission.existing && thread.parentId === this.state.rootId) this.root.spawned(thread);
    return thread;
  }

  private startThread(record: ThreadRecord, spec: AgentSpec): void {
    const start = this.starter.start(record.thread, this.state.lineageOf(record.thread.id), spec);
    this.started.set(record.thread.id, start);
    this.track(start);
  }

  private ownedByRootThread(operation: ControlOperation): boolean {
    return isThreadOperation(operation) && ownerOf(operation, this.state.rootId) === this.state.rootId;
  }

  /** The root thread's own operations (its mailbox, its turn, its interactions), as any thread's. */
  bindRootThread(operations: Pick<ThreadOperations, 'perform'>): void {
    this.rootThread = operations;
  }

  private async asRootThread(request: ControlRequest): Promise<ControlResults[keyof ControlResults]> {
    // A request carried from the last run is accepted while the run is still being made.
    if (!this.rootThread) await condition(() => this.rootThread !== undefined);
    return this.rootThread!.perform(request) as ControlResults[keyof ControlResults];
  }

  /** A side effect never rejects into the workflow (an unhandled rejection fails its task). */
  track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => log.warn('side effect failed', { error: String(error) }));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }
}
