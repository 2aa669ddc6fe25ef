import { condition, isCancellation, log, ParentClosePolicy, patched, startChild } from '@temporalio/workflow';
import type { ApprovalPolicy } from '../domain/approval-policy';
import { jsonBytes, utf8Length } from '../domain/bytes';
import { clipToBytes } from '../domain/carry-bounds';
import type { ThreadId } from '../domain/ids';
import { isTerminal, type AgentSpec, type AgentThread, type ThreadStatus } from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import type { RootRunState } from '../domain/run-state';
import { agentWorkflow } from './agent-workflow';
import { patches } from './patches';
import { usesModelKernel } from './kernels';
import { microUsdUnit, tokenUnit, type AllowanceUnit } from './token-allowance';
import type { TaskBudget } from './task-budget';

/**
 * Bytes of child starts (their inputs and details) that may be in flight at once. A workflow task's
 * answer carries all its commands and must stay under 4 MiB: eight legal 440 kB spawns answered in one
 * task passed it, the task failed on every attempt and the root run was stuck. Starts past this wait
 * until earlier ones are confirmed, which happens in a later task.
 */
export const startBytesInFlight = 1_500_000;

/** What every sub-agent of a run starts with, besides its thread and spec. */
export interface StartSettings {
  protocolVersion: 1;
  runKey: string;
  idleTimeoutMs: number;
  interactionTimeoutMs: number;
  conversationRetentionMs: number;
  continueAsNewAfterEvents: number;
  usageLedger?: true;
  callSizedAllowance?: true;
  transcriptDelta?: true;
  turnTokens?: true;
  /** SPEC S11.4: the tree's approval policy now; later changes reach the thread by signal. */
  approvalPolicy?: ApprovalPolicy;
}

/** What a thread is given to spend as it starts: its input's allowance fields. */
type StartAllowance = { allowance?: number; dollarBudget?: true; costAllowance?: number };

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Starts sub-agents' workflows as child workflows of the root run, bounded in bytes per workflow task. */
export class ThreadStarter {
  private inFlightBytes = 0;

  constructor(
    private readonly settings: () => StartSettings,
    private readonly events: {
      /**
       * Tokens set aside for the thread as it starts (SPEC S6.4), and micro-dollars under a budget in
       * dollars (SPEC S11.3), given in its input.
       */
      allowance(thread: AgentThread, spec: AgentSpec): StartAllowance;
      /** The server has the thread's workflow: its first turn has started. */
      started(thread: AgentThread): void;
      failed(thread: AgentThread, error: unknown): void;
      /** Its workflow closed, with the thread's end as the workflow said it or as Temporal did. */
      closed(thread: AgentThread, status: ThreadStatus): void;
    },
    /** What the workflow's task may still send (SPEC S3.10: a start is one of the largest commands). */
    private readonly budget?: TaskBudget,
  ) {}

  /**
   * Starts a thread's workflow and resolves once the server has it (or it failed to start, reported to
   * `failed`). Under the byte bound the start command is issued at once, in the caller's task.
   */
  async start(thread: AgentThread, lineage: readonly ThreadId[], spec: AgentSpec): Promise<void> {
    const staticDetails = `agents-kit sub-agent ${thread.id}\n\nroot run: ${thread.rootId}\nparent: ${thread.parentId}\ndepth: ${thread.depth}\ntask queue: ${thread.taskQueue}\n\ntask:\n${clipToBytes(thread.task, 2_048, 'the start details')}`;
    const input = {
      thread,
      lineage: [...lineage],
      spec,
      ...this.settings(),
      ...this.events.allowance(thread, spec),
    };
    const bytes = jsonBytes([input]) + utf8Length(staticDetails);
    const fits = () => this.inFlightBytes === 0 || this.inFlightBytes + bytes <= startBytesInFlight;
    // Checked again after each wake-up: every waiter's condition is evaluated before any of them goes
    // on, so several would see the same room (six 536 kB starts once went in one task, over 4 MiB).
    try {
      // Cancelled here (the root run's cancel request) it never started: it fails as a start that did.
      while (!fits()) await condition(fits);
    } catch (error) {
      this.events.failed(thread, error);
      return;
    }
    this.inFlightBytes += bytes;
    try {
      const later = this.budget?.take(bytes);
      if (later) await later;
      const child = await startChild(agentWorkflow, {
        workflowId: thread.id,
        taskQueue: thread.taskQueue,
        // Threads outlive the root run's current execution (continue-as-new); the root closes them itself.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        args: [input],
        typedSearchAttributes: [
          { key: searchAttributes.rootThreadId, value: thread.rootId },
          { key: searchAttributes.parentThreadId, value: thread.parentId ?? '' },
          { key: searchAttributes.depth, value: thread.depth },
          { key: searchAttributes.name, value: thread.name },
          // A new thread's first turn is requested at its start: it is `running` from its first task,
          // and the status costs no upsert (an action) there.
          { key: searchAttributes.status, value: 'running' },
        ],
        staticSummary: `${thread.path}: ${truncate(thread.task, 180)}`,
        staticDetails,
      });
      this.events.started(thread);
      // A terminated, timed-out or failed workflow reports no end of its own: Temporal's close says it.
      void child.result().then(
        (ended) => this.events.closed(thread, isTerminal(ended?.status) ? ended.status : 'completed'),
        (error: unknown) => this.events.closed(thread, isCancellation(error) ? 'cancelled' : 'failed'),
      );
    } catch (error) {
      log.error('sub-agent failed to start', { threadId: thread.id, error: String(error) });
      this.events.failed(thread, error);
    } finally {
      this.inFlightBytes -= bytes;
    }
  }
}

/** The starter of a root run's sub-agents, which keeps the run's registry and budget up to date. */
export function rootThreadStarter(
  state: RootRunState,
  settings: () => StartSettings,
  budget: TaskBudget,
  /** What else a thread's end that its workflow did not report brings (workflows/outside-ends.ts). */
  endedOutside: (threadId: string) => void,
): ThreadStarter {
  return new ThreadStarter(
    settings,
    {
      // A model-kernel thread starts with tokens to spend (SPEC S6.4): no reserve round trip to the root.
      allowance: (thread, spec) => {
        const dollars: StartAllowance = state.hasDollarBudget(thread.id) ? { dollarBudget: true } : {};
        if (!usesModelKernel(spec)) return dollars;
        const scope = { rootId: thread.rootId, threadId: thread.id };
        const granted = (unit: AllowanceUnit) => {
          try {
            return state.reserve(scope, { tokens: unit.chunk, owed: 0, spent: 0, unit: unit.name }).granted;
          } catch {
            return 0; // closed before it started, or no budget left: it asks when it needs some
          }
        };
        const tokens = granted(tokenUnit);
        const microUsd = dollars.dollarBudget ? granted(microUsdUnit) : 0;
        return {
          ...dollars,
          ...(tokens > 0 ? { allowance: tokens } : {}),
          ...(microUsd > 0 ? { costAllowance: microUsd } : {}),
        };
      },
      // The root counts a thread's first turn as started with its workflow: the thread does not report it.
      started: (thread) => state.turnStarted(thread.id, 1, new Date().toISOString()),
      failed: (thread) => {
        state.threadEnded(thread.id, 'failed', new Date().toISOString(), true);
        state.refund(thread.id, Number.MAX_SAFE_INTEGER);
        state.refund(thread.id, Number.MAX_SAFE_INTEGER, 'microUsd');
      },
      // Its end not reported (its workflow terminated, say): the root ends it as Temporal closed it, so
      // its slot comes back and a shutdown does not wait for it. What it held stays spent: unknown.
      closed: (thread, status) => {
        if (state.record(thread.id)?.ended !== false || !patched(patches.childCloseEnds)) return;
        state.threadEnded(thread.id, status, new Date().toISOString(), true);
        endedOutside(thread.id);
      },
    },
    budget,
  );
}
