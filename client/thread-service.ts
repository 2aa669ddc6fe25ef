import { type Client, type WorkflowHandle } from '@temporalio/client';
import { ApprovalPolicyChange, checkChangeNamesAList, type ApprovalPolicy } from '../domain/approval-policy';
import { mintCapability, rootCapability, RunKey, type Capability } from '../domain/capability';
import {
  ReconcileRequest,
  type ReconcileRequestInput,
  type ReconcileResult,
  type RootRunResult,
  type ShutdownReport,
} from '../domain/control';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { parseId, type ThreadId } from '../domain/ids';
import {
  approvalPolicyQuery,
  completeRootUpdate,
  reconcileUpdate,
  setApprovalPolicyUpdate,
  shutdownUpdate,
  threadQuery,
  revokeGrantUpdate,
  runStateQuery,
} from '../domain/messages';
import { unwrapAnswer } from '../domain/control';
import { runCounters, type RunCounters } from '../domain/run-turns';
import type { RunSnapshot } from '../domain/run-state';
import { type AgentThread, type InterAgentMessage } from '../domain/schemas';
import type { rootRunWorkflow } from '../workflows/root-run-workflow';
import { rootRunHandle, startRootRun, type AttachOptions } from './attach';
import { kitCall } from './errors';
import { withDeadline } from './deadline';
import { joinUnconfirmed } from './shutdown-join';
import { executeUpdate } from './updates';
import { watchOutput, type LiveOutputEvent, type WatchOutputOptions } from './live-output';
import { streamTree, type TreeEvent, type TreeReadOptions } from './tree-stream';

import { ThreadControls } from './thread-controls';
import { usageReport, type UsageReport } from './usage';

export { ThreadControls } from './thread-controls';
export type { AttachOptions } from './attach';
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
    /**
     * SPEC S3.9: the root capability — the run's key, 64 hex digits. Whoever holds it has root authority
     * over this run (reopen, root controls, shutdown): keep it secret, as a backend keeps a credential.
     */
    readonly capability: string,
  ) {}

  /**
   * Starts a new root run. Rejects a second attachment (Conflict), a finished root or one that already
   * has children (InvalidState: reopen it instead), a grant whose owner or root does not match
   * (PermissionDenied) and an exhausted budget (QuotaExceeded).
   */
  static async attach(client: Client, options: AttachOptions): Promise<ThreadService> {
    const { rootThreadId, handle, runKey } = await startRootRun(client, options);
    return new ThreadService(client, rootThreadId, handle, runKey);
  }

  /**
   * A handle to an existing root run, its counters read from durable state (SPEC S3.3: recovery). Needs
   * the root capability that attach returned (SPEC S3.9): PermissionDenied for any other.
   */
  static async reopen(client: Client, rootThreadId: string, capability: string): Promise<ThreadService> {
    const id = parseId('thread', rootThreadId, 'rootThreadId');
    const runKey = parseInput(RunKey, capability, 'capability');
    const handle = await rootRunHandle(client, id);
    const service = new ThreadService(client, id, handle, runKey);
    // Proves the capability: the run answers its state only to its root (a run that has ended, too).
    await service.snapshot();
    return service;
  }

  /** The root thread's capability, proving root authority to the run's workflows (SPEC S3.9). */
  get rootCapability(): Capability {
    return rootCapability(this.capability, this.rootThreadId);
  }

  /**
   * SPEC S3.4: the controls bound to the root thread, for the root kernel (or a backend acting as root);
   * the same object each call, so a `wait` knows the turns its messages asked for.
   */
  rootControls(): ThreadControls {
    this.controls ??= new ThreadControls(this.handle, this.rootCapability);
    return this.controls;
  }

  private controls: ThreadControls | undefined;

  /**
   * SPEC S3.9: the capability of one thread of this run, for a service that acts as that thread (its
   * controls: `new ThreadControls(service.handle, capability)`); it proves that thread and nothing above.
   * It is a delegated one: every control operation takes it as that thread's, but what only the thread's
   * own workflow sends (its turns' and its end's reports, budget charges, settlements) refuses it.
   */
  async capabilityOf(threadId: string): Promise<Capability> {
    const id = parseId('thread', threadId, 'threadId');
    const records = new Map(
      (await this.snapshot()).records.map((record) => [record.thread.id, record.thread]),
    );
    if (!records.has(id))
      throw new KitError(ErrorKind.NotFound, `thread ${id} is not part of root run ${this.rootThreadId}`);
    const lineage: ThreadId[] = [];
    for (let parent = records.get(id)!.parentId; parent; parent = records.get(parent)?.parentId ?? null)
      lineage.unshift(parent);
    return mintCapability(this.capability, this.rootThreadId, lineage, id, 'delegated');
  }

  /**
   * SPEC S10.1: what a thread of this run is generating, as it generates it ({@link watchOutput}, with
   * the root's authority). The root's own thread by default.
   */
  watchOutput(
    threadId: string = this.rootThreadId,
    options: Omit<WatchOutputOptions, 'capability'> = {},
  ): AsyncGenerator<LiveOutputEvent> {
    return watchOutput(this.client, threadId, { ...options, capability: this.rootCapability });
  }

  /**
   * SPEC S10.2: every event of this run's tree (or of one thread's subtree), in causal order, from the
   * start or after a cursor, readable after the run has ended ({@link streamTree}).
   */
  async *streamTree(options: TreeReadOptions & { threadId?: string }): AsyncGenerator<TreeEvent> {
    objectInput(options, 'streamTree options');
    const ancestors =
      options.threadId && options.threadId !== this.rootThreadId
        ? (await this.capabilityOf(options.threadId)).lineage
        : [];
    yield* streamTree(this.client, this.rootThreadId, { ...options, ancestors, runKey: this.capability });
  }

  /** SPEC S3.7: the root's messages, drained in order, each once. */
  takeRootMessages(): Promise<InterAgentMessage[]> {
    return this.rootControls().takeRootMessages();
  }

  /** Revokes the run's grant: later spawns anywhere in the tree fail with PermissionDenied. */
  revokeGrant(): Promise<void> {
    return executeUpdate(this.handle, revokeGrantUpdate, [this.rootCapability], 'revokeGrant');
  }

  /** The run's durable state: registry, counters, grant. */
  async snapshot(): Promise<RunSnapshot> {
    return unwrapAnswer(
      await kitCall('snapshot', () => this.handle.query(runStateQuery, this.rootCapability)),
    );
  }

  /**
   * SPEC S11.3: the usage ledger of this run's tree: input and output tokens and cost per model, for the
   * tree (the root run's, from its threads' reports) and for each thread (asked of its own workflow).
   */
  async usage(): Promise<UsageReport> {
    return usageReport(this.client, this.rootThreadId, await this.snapshot());
  }

  /**
   * SPEC S11.4: changes the tree's approval policy while it runs (each list given replaces the current
   * one). Every live thread gets it, and an approval waiting for a tool it now lets through is released
   * (settled as answered by the policy). Answers the new policy; a malformed or too large change is a
   * Protocol error and changes nothing.
   *
   * @example
   * await service.setApprovalPolicy({ neverAsk: ['word_count'], alwaysAsk: ['deploy'] });
   * await service.setApprovalPolicy({ remembered: [] }); // forget every "always allow"
   */
  async setApprovalPolicy(change: ApprovalPolicyChange): Promise<ApprovalPolicy> {
    const parsed = parseInput(ApprovalPolicyChange, change, 'approval policy change');
    checkChangeNamesAList(parsed);
    return executeUpdate(
      this.handle,
      setApprovalPolicyUpdate,
      [this.rootCapability, parsed],
      'setApprovalPolicy',
    );
  }

  /** SPEC S11.4: the tree's approval policy as the root run has it now. */
  async approvalPolicy(): Promise<ApprovalPolicy> {
    return unwrapAnswer(
      await kitCall('approvalPolicy', () => this.handle.query(approvalPolicyQuery, this.rootCapability)),
    );
  }

  /** Live threads, lifetime spawns and tokens used, as the root run counts them. */
  async counters(): Promise<RunCounters> {
    return runCounters(await this.snapshot(), this.rootThreadId);
  }

  /**
   * SPEC S3.5: closes admission, cancels every live thread, waits until each has ended, and reports
   * threads that failed or whose end could not be confirmed; returns once the run has closed. Idempotent,
   * and a later call (also after the run has ended) finishes joining: the threads the run could not
   * confirm are looked up again, and those that have ended since are reported cancelled or failed.
   */
  shutdown(): Promise<ShutdownReport> {
    return this.finish(shutdownUpdate, 'shutdown');
  }

  /**
   * SPEC S3.8: the root completes; every descendant is closed and captured controls stop working.
   * Returns once the run has closed.
   */
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
    return executeUpdate(this.handle, reconcileUpdate, [this.rootCapability, parsed], 'reconcile');
  }

  /** The run's final result (waits for it to end). */
  result(): Promise<RootRunResult> {
    return kitCall('result', () => this.handle.result());
  }

  /**
   * Runs shutdown or complete, then waits until the run has closed, so what the caller does next (attach
   * the same root id: InvalidState; stop the workers) meets a finished run, not one still winding down.
   */
  private async finish(update: typeof shutdownUpdate, what: string): Promise<ShutdownReport> {
    try {
      const report = await executeUpdate(this.handle, update, [this.rootCapability], what);
      // The run ends right after answering (its last notifications go first). How it ended is the
      // result's business; the report is what this call promises.
      await this.handle.result().catch(() => undefined);
      return await joinUnconfirmed(this.client, report);
    } catch (error) {
      const ended =
        error instanceof KitError && error.kind === ErrorKind.Closed ? await this.endedResult() : undefined;
      if (ended?.shutdown) return await joinUnconfirmed(this.client, ended.shutdown);
      throw error;
    }
  }

  /** The run's result if it has ended, undefined while it runs. */
  private async endedResult(): Promise<RootRunResult | undefined> {
    const description = await kitCall('describe', () => this.handle.describe());
    if (description.status.name === 'RUNNING') return undefined;
    if (description.status.name === 'CANCELLED') return await this.cancelledResult();
    return kitCall('result', () => this.handle.result());
  }

  /**
   * SPEC S3.5: a run cancelled through Temporal (the Web UI's Cancel, `temporal workflow cancel`) shut
   * its tree down and ended as cancelled, which keeps no result; its root and shutdown report are read
   * from its state by a query on the closed run (a worker replays its history to answer).
   */
  private async cancelledResult(): Promise<RootRunResult> {
    const state = await withDeadline(this.client.workflow, cancelledReadMs, () =>
      kitCall('snapshot', () => this.handle.query(runStateQuery, this.rootCapability)),
    );
    if (state === undefined)
      throw new KitError(
        ErrorKind.Closed,
        `the run was cancelled; its report is read from its history by a worker of task queue ` +
          `${(await this.handle.describe()).taskQueue}, and none answered within ${cancelledReadMs / 1000} s`,
      );
    const snapshot = unwrapAnswer(state);
    const root = snapshot.records.find(({ thread }) => thread.id === this.rootThreadId)!.thread;
    return { root, ...(snapshot.shutdown ? { shutdown: snapshot.shutdown } : {}) };
  }
}

/** How long reading a cancelled run's report waits for a worker to replay it. */
const cancelledReadMs = 15_000;
