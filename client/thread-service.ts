import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import {
  ReconcileRequest,
  unwrapAnswer,
  waitAcrossRuns,
  WaitRequest,
  type AgentInterruptReceipt,
  type ReconcileRequestInput,
  type ReconcileResult,
  type RootRunResult,
  type ShutdownReport,
  type ThreadChange,
  type ThreadChanges,
  type WaitRequestInput,
  type WaitResult,
} from '../domain/control';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { newId, parseId, type ThreadId } from '../domain/ids';
import {
  closeThreadUpdate,
  completeRootUpdate,
  firstTurnUpdate,
  interruptUpdate,
  reconcileUpdate,
  shutdownUpdate,
  threadQuery,
  watchThreadUpdate,
  listThreadsQuery,
  loadThreadQuery,
  revokeGrantUpdate,
  runStateQuery,
  sendMessageUpdate,
  spawnRemoteUpdate,
  spawnUpdate,
  takeRootMessagesUpdate,
  waitUpdate,
} from '../domain/messages';
import type { RunSnapshot } from '../domain/run-state';
import {
  AgentSpec,
  DelegationGrant,
  RemoteSpawnRequest,
  RootRunInput,
  SendMessageRequest,
  SpawnRequest,
  type AgentThread,
  type ControlScope,
  type AgentSpecInput,
  type DelegationGrantInput,
  type InterAgentMessage,
  type RemoteSpawnRequestInput,
  type SendMessageRequestInput,
  type SpawnRequestInput,
  type TurnOutcome,
  isTerminal,
} from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import type { rootRunWorkflow } from '../workflows/root-run-workflow';
import { kitCall, toKitError } from './errors';
import { executeUpdate } from './updates';

/** How to attach a new root run (SPEC S3.2). */
export interface AttachOptions {
  /** The worker fleet's task queue. */
  taskQueue: string;
  /** Who attaches: must be the grant's owner. */
  owner: string;
  /** The root agent. */
  root: AgentSpecInput;
  /** The delegation grant; its rootThreadId, when given, must be the new root's id. */
  grant: Omit<DelegationGrantInput, 'rootThreadId'> & { rootThreadId?: string };
  /** The root thread id; a new one when omitted. */
  rootThreadId?: string;
  /** How long shutdown waits for threads to confirm their end (default 60 s). */
  shutdownGraceMs?: number;
  /** History length at which the run's workflows continue-as-new (default 4000 events). */
  continueAsNewAfterEvents?: number;
}

/** Counters of a root run, read from its durable state. */
export interface RunCounters {
  live: number;
  total: number;
  tokens: number;
  admissionOpen: boolean;
}

/**
 * The host of exactly one root run (SPEC S3): every caller in that run talks to the same root-run
 * workflow, so nobody can reset its admission counters.
 *
 * @example
 * const service = await ThreadService.attach(client, { taskQueue, owner: 'billing', root: { task: 'Plan' }, grant: { owner: 'billing' } });
 * const child = await service.rootControls().spawn({ task: 'Research' });
 */
export class ThreadService {
  private constructor(
    readonly client: Client,
    readonly rootThreadId: ThreadId,
    readonly handle: WorkflowHandle<typeof rootRunWorkflow>,
  ) {}

  /**
   * Starts a new root run. Rejects a second attachment (Conflict), a finished root or one that already
   * has children (InvalidState: reopen it instead), a grant whose owner or root does not match
   * (PermissionDenied) and an exhausted budget (QuotaExceeded).
   */
  static async attach(client: Client, options: AttachOptions): Promise<ThreadService> {
    const rootThreadId = options.rootThreadId
      ? parseId('thread', options.rootThreadId, 'rootThreadId')
      : newId('thread', randomUUID);
    const spec = parseInput(AgentSpec, options.root, 'root');
    const grant = parseInput(
      DelegationGrant,
      { ...options.grant, rootThreadId: options.grant.rootThreadId ?? rootThreadId },
      'grant',
    );
    if (grant.rootThreadId !== rootThreadId) {
      throw new KitError(
        ErrorKind.PermissionDenied,
        `the grant is for root ${grant.rootThreadId}, not ${rootThreadId}`,
      );
    }
    if (grant.owner !== options.owner) {
      throw new KitError(
        ErrorKind.PermissionDenied,
        `the grant belongs to ${grant.owner}, not ${options.owner}`,
      );
    }
    if (grant.spentTokens >= grant.budgetTokens) {
      throw new KitError(
        ErrorKind.QuotaExceeded,
        `the grant's budget is exhausted: ${grant.spentTokens} of ${grant.budgetTokens} tokens spent`,
      );
    }
    const taskQueue = parseInput(RootRunInput.shape.taskQueue, options.taskQueue, 'taskQueue');
    try {
      const handle = await client.workflow.start<typeof rootRunWorkflow>('rootRunWorkflow', {
        taskQueue,
        workflowId: rootThreadId,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [
          {
            rootThreadId,
            spec,
            grant,
            taskQueue,
            shutdownGraceMs: options.shutdownGraceMs,
            continueAsNewAfterEvents: options.continueAsNewAfterEvents,
          },
        ],
        typedSearchAttributes: [
          { key: searchAttributes.rootThreadId, value: rootThreadId },
          { key: searchAttributes.parentThreadId, value: '' },
          { key: searchAttributes.depth, value: 0 },
          { key: searchAttributes.name, value: spec.name ?? 'root' },
          { key: searchAttributes.status, value: 'pending' },
        ],
        staticSummary: `/root: ${spec.task.length > 180 ? `${spec.task.slice(0, 179)}…` : spec.task}`,
        staticDetails: `agents-kit root run ${rootThreadId}\n\nowner: ${grant.owner}\nmaxDepth ${grant.maxDepth} · maxConcurrent ${grant.maxConcurrent} · maxTotal ${grant.maxTotal} · budget ${grant.budgetTokens} tokens\n\ntask:\n${spec.task}`,
      });
      return new ThreadService(client, rootThreadId, handle);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw toKitError(error, 'attach');
      throw await ThreadService.explainExisting(client, rootThreadId, error);
    }
  }

  /** A handle to an existing root run, its counters read from durable state (SPEC S3.3: recovery). */
  static async reopen(client: Client, rootThreadId: string): Promise<ThreadService> {
    const id = parseId('thread', rootThreadId, 'rootThreadId');
    const handle = client.workflow.getHandle<typeof rootRunWorkflow>(id);
    await kitCall('reopen', async () => {
      try {
        await handle.describe();
      } catch (error) {
        if (error instanceof Error && error.name === 'WorkflowNotFoundError')
          throw new KitError(ErrorKind.NotFound, `no root run ${id}`);
        throw error;
      }
    });
    return new ThreadService(client, id, handle);
  }

  /** SPEC S3.4: the controls bound to the root thread, for the root kernel (or a backend acting as root). */
  rootControls(): ThreadControls {
    return new ThreadControls(this.handle, { rootId: this.rootThreadId, threadId: this.rootThreadId });
  }

  /** SPEC S3.7: the root's messages, drained in order, each once. */
  takeRootMessages(): Promise<InterAgentMessage[]> {
    return this.rootControls().takeRootMessages();
  }

  /** Revokes the run's grant: later spawns anywhere in the tree fail with PermissionDenied. */
  revokeGrant(): Promise<void> {
    const scope = { rootId: this.rootThreadId, threadId: this.rootThreadId };
    return executeUpdate(this.handle, revokeGrantUpdate, [scope], 'revokeGrant');
  }

  /** The run's durable state: registry, counters, grant. */
  snapshot(): Promise<RunSnapshot> {
    return kitCall('snapshot', () => this.handle.query(runStateQuery));
  }

  /** Live threads, lifetime spawns and tokens used, as the root run counts them. */
  async counters(): Promise<RunCounters> {
    const snapshot = await this.snapshot();
    const root = snapshot.records.find((record) => record.thread.id === this.rootThreadId)!;
    return {
      live: root.subtreeLive,
      total: root.subtreeTotal,
      tokens: root.subtreeTokens,
      admissionOpen: snapshot.admissionOpen,
    };
  }

  /**
   * SPEC S3.5: closes admission, cancels every live thread, waits until each has ended, and reports
   * threads that failed or whose end could not be confirmed. Idempotent: a later call (also after the
   * run has ended) returns the same report.
   */
  shutdown(): Promise<ShutdownReport> {
    return this.finish(shutdownUpdate, 'shutdown');
  }

  /** SPEC S3.8: the root completes; every descendant is closed and captured controls stop working. */
  complete(): Promise<ShutdownReport> {
    return this.finish(completeRootUpdate, 'complete');
  }

  /** SPEC S3.8: the root thread as durably recorded now (after the run ended too). */
  async refreshRoot(): Promise<AgentThread> {
    const ended = await this.endedResult();
    return ended?.root ?? kitCall('refreshRoot', () => this.handle.query(threadQuery));
  }

  /** SPEC S3.6: resolves an uncertain spawn by its request id. */
  async reconcile(request: ReconcileRequestInput): Promise<ReconcileResult> {
    const parsed = parseInput(ReconcileRequest, request, 'reconcile request');
    return executeUpdate(this.handle, reconcileUpdate, [this.rootScope, parsed], 'reconcile');
  }

  /** The run's final result (waits for it to end). */
  result(): Promise<RootRunResult> {
    return kitCall('result', () => this.handle.result());
  }

  private get rootScope(): ControlScope {
    return { rootId: this.rootThreadId, threadId: this.rootThreadId };
  }

  private async finish(update: typeof shutdownUpdate, what: string): Promise<ShutdownReport> {
    try {
      return await executeUpdate(this.handle, update, [this.rootScope], what);
    } catch (error) {
      const ended =
        error instanceof KitError && error.kind === ErrorKind.Closed ? await this.endedResult() : undefined;
      if (ended?.shutdown) return ended.shutdown;
      throw error;
    }
  }

  /** The run's result if it has ended, undefined while it runs. */
  private async endedResult(): Promise<RootRunResult | undefined> {
    const description = await kitCall('describe', () => this.handle.describe());
    if (description.status.name === 'RUNNING') return undefined;
    return kitCall('result', () => this.handle.result());
  }

  private static async explainExisting(
    client: Client,
    rootThreadId: ThreadId,
    cause: Error,
  ): Promise<KitError> {
    const handle = client.workflow.getHandle<typeof rootRunWorkflow>(rootThreadId);
    const description = await kitCall('attach', () => handle.describe());
    if (description.status.name !== 'RUNNING') {
      return new KitError(
        ErrorKind.InvalidState,
        `root ${rootThreadId} has already finished (${description.status.name.toLowerCase()}): it cannot be attached again`,
        undefined,
        { cause },
      );
    }
    const snapshot = await kitCall('attach', () => handle.query(runStateQuery));
    if (snapshot.records.length > 1) {
      return new KitError(
        ErrorKind.InvalidState,
        `root ${rootThreadId} already has ${snapshot.records.length - 1} sub-agents: reopen it instead of attaching`,
        undefined,
        { cause },
      );
    }
    return new KitError(ErrorKind.Conflict, `root ${rootThreadId} is already attached`, undefined, { cause });
  }
}

/** The control operations of SPEC S4, bound to one caller's scope. Every error is a KitError. */
export class ThreadControls {
  constructor(
    private readonly handle: WorkflowHandle<typeof rootRunWorkflow>,
    readonly scope: ControlScope,
  ) {}

  /** SPEC S4.1. A `requestId` makes it idempotent: the same id returns the same thread. */
  async spawn(request: SpawnRequestInput): Promise<AgentThread> {
    const parsed = parseInput(SpawnRequest, request, 'spawn request');
    return executeUpdate(this.handle, spawnUpdate, [this.scope, parsed], 'spawn');
  }

  /** SPEC S4.2: spawn onto a remote target registered in the grant. */
  async spawnRemote(request: RemoteSpawnRequestInput): Promise<AgentThread> {
    const parsed = parseInput(RemoteSpawnRequest, request, 'spawn request');
    return executeUpdate(this.handle, spawnRemoteUpdate, [this.scope, parsed], 'spawnRemote');
  }

  /** SPEC S4.3: send a message; it is delivered exactly once, in per-recipient sequence order. */
  async sendMessage(request: SendMessageRequestInput): Promise<InterAgentMessage> {
    const parsed = parseInput(SendMessageRequest, request, 'message');
    return executeUpdate(this.handle, sendMessageUpdate, [this.scope, parsed], 'sendMessage');
  }

  /** SPEC S4.4: the thread, or null when it is not in the caller's subtree. */
  async loadThread(threadId: string): Promise<AgentThread | null> {
    const id = parseId('thread', threadId, 'threadId');
    return unwrapAnswer(
      await kitCall('loadThread', () => this.handle.query(loadThreadQuery, this.scope, id)),
    );
  }

  /** SPEC S4.4: the caller's subtree. */
  async listThreads(): Promise<AgentThread[]> {
    return unwrapAnswer(await kitCall('listThreads', () => this.handle.query(listThreadsQuery, this.scope)));
  }

  /** SPEC S4.7: the threads' latest turns once one ends a turn or is terminal; `timedOut` otherwise. */
  async wait(request: WaitRequestInput): Promise<WaitResult> {
    const parsed = parseInput(WaitRequest, request, 'wait request');
    return waitAcrossRuns(parsed, (once) =>
      executeUpdate(this.handle, waitUpdate, [this.scope, once], 'wait'),
    );
  }

  /** SPEC S4.6: cancels the thread's running turn (its activities too); the thread stays alive and idle. */
  async interrupt(threadId: string): Promise<AgentInterruptReceipt> {
    const id = parseId('thread', threadId, 'threadId');
    return executeUpdate(this.handle, interruptUpdate, [this.scope, id], 'interrupt');
  }

  /** SPEC S4.8: ends a descendant and its subtree as cancelled; returns the closed threads. */
  async close(threadId: string): Promise<AgentThread[]> {
    const id = parseId('thread', threadId, 'threadId');
    return executeUpdate(this.handle, closeThreadUpdate, [this.scope, id], 'close');
  }

  /**
   * SPEC S4.5: the thread's changes (status, turn started/ended, latest result) in order, ending with
   * its terminal state. Long-polls the thread's own workflow.
   */
  async *subscribeThread(threadId: string): AsyncGenerator<ThreadChange> {
    const id = await this.visible(threadId);
    const handle = this.handle.client.getHandle(id);
    let version = 0;
    for (;;) {
      let answer: ThreadChanges;
      try {
        answer = await executeUpdate(handle, watchThreadUpdate, [version], 'subscribeThread');
      } catch (error) {
        if (!(error instanceof KitError && error.kind === ErrorKind.Closed)) throw error;
        // The thread's workflow has ended: its final state is in the root run's registry.
        const final = (await this.loadThread(id))!;
        yield {
          version: version + 1,
          status: final.status,
          turnsStarted: final.turnsStarted,
          turnsCompleted: final.turnsCompleted,
          ...(final.latestTurn ? { latestTurn: final.latestTurn } : {}),
          at: final.updatedAt,
        };
        return;
      }
      for (const change of answer.changes) yield change;
      version = answer.changes.at(-1)?.version ?? version;
      if (answer.terminal) return;
    }
  }

  /** SPEC S4.5: the thread's first turn's retained outcome — never a later turn's. */
  async subscribeFirstTurn(threadId: string): Promise<TurnOutcome> {
    const id = await this.visible(threadId);
    const handle = this.handle.client.getHandle(id);
    for (;;) {
      let first: TurnOutcome | null;
      try {
        first = await executeUpdate(handle, firstTurnUpdate, [], 'subscribeFirstTurn');
      } catch (error) {
        if (!(error instanceof KitError && error.kind === ErrorKind.Closed)) throw error;
        first = (await this.loadThread(id))?.firstTurn ?? null;
        if (!first)
          throw new KitError(ErrorKind.InvalidState, `thread ${id} ended without completing a first turn`);
      }
      if (first) return first;
      const thread = await this.loadThread(id);
      if (thread && isTerminal(thread.status) && !thread.firstTurn) {
        throw new KitError(ErrorKind.InvalidState, `thread ${id} ended without completing a first turn`);
      }
    }
  }

  private async visible(threadId: string): Promise<ThreadId> {
    const id = parseId('thread', threadId, 'threadId');
    if (!(await this.loadThread(id)))
      throw new KitError(ErrorKind.NotFound, `thread ${id} is not in the subtree of ${this.scope.threadId}`);
    return id;
  }

  /** SPEC S3.7 (root scope only). */
  async takeRootMessages(): Promise<InterAgentMessage[]> {
    return executeUpdate(this.handle, takeRootMessagesUpdate, [this.scope], 'takeRootMessages');
  }
}
