import { scriptedKernelModel, type CallUsage } from '../domain/usage';
import {
  ActivityCancellationType,
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { ThreadLoopState } from '../domain/control';
import { ErrorKind, KitError, kitErrorFromFailure } from '../domain/errors';
import {
  allowsTool,
  maxNotificationText,
  type AgentThread,
  type InterAgentMessage,
  type TurnOutcome,
} from '../domain/schemas';
import { clipOutput } from '../domain/transcript';
import { carriedResultBytes, clipToBytes, fitMemory, maxTurnResultBytes } from '../domain/carry-bounds';
import type { ToolApproval } from './approval-gate';
import type { AgentControls, Kernel } from './kernel';
import { KeptTimer } from './kept-timer';
import { tracedTurn } from './traced-turn';
import type { ThreadConversation } from './thread-conversation';
import { turnEnded } from './workflow-metrics';

const toolRetry = {
  maximumAttempts: 5,
  nonRetryableErrorTypes: ['Protocol', 'PermissionDenied', 'NotFound', 'Unsupported', 'InvalidState'],
};
const { runTool } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  // An interrupt returns only once the tool has really stopped (SPEC S4.6).
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: toolRetry,
});
/** A fast tool (ToolDefinition.local): a local activity, no activity task round trip per call. */
const { runTool: runLocalTool } = proxyLocalActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: toolRetry,
});

/** Where a thread's turn inputs come from and where its lifecycle is reported. */
export interface ThreadPorts {
  kernel: Kernel;
  /** The controls for one turn; a root turn's controls stop working when the turn is over (SPEC S3.8). */
  controls(turn: number): AgentControls;
  /** Messages waiting for this thread, taken at the start of a turn. */
  takeInbox(turn: number): InterAgentMessage[];
  conversation: ThreadConversation;
  /** SPEC S11.3: what one model call of a turn used, for the thread's usage ledger. */
  recordUsage(model: string, usage: CallUsage): void;
  /**
   * SPEC S6.4 (the `turnTokens` feature): a turn's outcome counts the input and output tokens its model
   * calls reported, whatever way it ended; without it, only a reply's own `tokens` (runs before it).
   */
  countsTurnTokens?: boolean;
  /** SPEC S11.4: the thread's approval gate, in runs with an approval policy. */
  approval?: ToolApproval;
  turnStarted(turn: number, at: string): void;
  turnEnded(outcome: TurnOutcome, nextStatus: 'idle' | 'running'): void;
}

/** Why a thread loop returned. */
export type LoopExit = 'stopped' | 'idle-timeout' | 'continue-as-new';

/**
 * Runs a thread's turns (SPEC S4.9): a turn starts when one is requested (the first task, or a message
 * with triggerTurn); the thread is idle in between. A turn runs in its own cancellation scope, so an
 * interrupt cancels its model and tool activities and leaves the thread idle and alive (SPEC S4.6).
 */
export class ThreadLoop {
  private stopRequested = false;
  private currentTurn: CancellationScope | undefined;
  /** Kept across turns: a thread whose turns come more often than its idle timeout starts one per timeout. */
  private readonly idleTimer = new KeptTimer();

  constructor(
    private readonly thread: () => AgentThread,
    private readonly ports: ThreadPorts,
    readonly state: ThreadLoopState,
  ) {}

  requestTurn(): void {
    this.state.turnRequested = true;
  }

  /** Whether a turn is running now. */
  get running(): boolean {
    return this.currentTurn !== undefined;
  }

  /** Cancels the running turn, if any; the thread stays alive. */
  interrupt(): { cancellationRequested: boolean; interruptedTurn?: number } {
    if (!this.currentTurn) return { cancellationRequested: false };
    this.currentTurn.cancel();
    return { cancellationRequested: true, interruptedTurn: this.state.turn };
  }

  /** Ends the loop: the running turn is interrupted and no further turn starts. */
  stop(): void {
    this.stopRequested = true;
    this.currentTurn?.cancel();
  }

  get stopping(): boolean {
    return this.stopRequested;
  }

  /**
   * Runs turns until stopped, idle for `idleTimeoutMs`, or `pause()` says to continue-as-new while idle.
   */
  async run(options: { idleTimeoutMs: number; pause?: () => boolean }): Promise<LoopExit> {
    const pause = options.pause ?? (() => false);
    const wakes = () => this.state.turnRequested || this.stopRequested || pause();
    for (;;) {
      const idleFor = this.state.idleSince ? Date.now() - Date.parse(this.state.idleSince) : 0;
      const idleMs = Math.max(1, options.idleTimeoutMs - idleFor);
      const woke = await this.idleTimer.waitUntil(Date.now() + idleMs, wakes);
      if (this.stopRequested) return 'stopped';
      if (!woke) return 'idle-timeout';
      if (!this.state.turnRequested) return 'continue-as-new';
      await this.runTurn();
      if (this.stopRequested) return 'stopped';
    }
  }

  private async runTurn(): Promise<void> {
    this.state.turnRequested = false;
    this.state.idleSince = null;
    const turn = ++this.state.turn;
    const startedAt = Date.now();
    this.ports.turnStarted(turn, new Date(startedAt).toISOString());
    this.ports.conversation.publish({
      type: 'status',
      event: 'turn-start',
      threadId: this.thread().id,
      detail: `turn ${turn}`,
    });
    const inbox = this.ports.takeInbox(turn);
    const scope = new CancellationScope();
    this.currentTurn = scope;
    let outcome: TurnOutcome;
    let used = 0;
    const recordUsage = (model: string, usage: CallUsage) => {
      used += usage.inputTokens + usage.outputTokens;
      this.ports.recordUsage(model, usage);
    };
    const tokens = (answered: number) => (this.ports.countsTurnTokens ? used + answered : answered);
    try {
      const answer = await scope.run(() =>
        tracedTurn(this.ports.kernel, {
          thread: this.thread(),
          turn,
          inbox,
          controls: this.ports.controls(turn),
          runTool: (name, input, options) => this.runTool(name, input, options ?? {}),
          ...(this.ports.approval ? { approval: this.ports.approval } : {}),
          ask: (request) => this.ports.conversation.ask(request),
          live: this.ports.conversation.liveTarget,
          memory: this.state.memory,
          recordUsage,
        }),
      );
      // Tokens a turn reports only at its end (a scripted reply's, in histories recorded before
      // `scriptedTokensCharged`: workflows/scripted-kernel.ts) stand in for a model's: in the ledger too.
      if (answer.tokens > 0)
        this.ports.recordUsage(scriptedKernelModel, {
          inputTokens: 0,
          outputTokens: answer.tokens,
          costUsd: 0,
        });
      outcome = {
        turn,
        status: 'completed',
        result: clipToBytes(answer.text, maxTurnResultBytes, 'the turn result'),
        tokens: tokens(answer.tokens),
        endedAt: new Date().toISOString(),
      };
    } catch (error) {
      const endedAt = new Date().toISOString();
      if (scope.consideredCancelled || isCancellation(error)) {
        outcome = { turn, status: 'interrupted', tokens: tokens(0), endedAt };
      } else {
        const kitError = kitErrorFromFailure(error);
        const failure = {
          kind: kitError?.kind ?? 'InvalidState',
          message: clipToBytes(kitError?.message ?? String(error), carriedResultBytes, 'the turn error'),
        };
        outcome = { turn, status: 'failed', error: failure, tokens: tokens(0), endedAt };
      }
    } finally {
      this.currentTurn = undefined;
      this.state.memory = fitMemory(this.state.memory);
    }
    this.state.idleSince = this.state.turnRequested ? null : outcome.endedAt;
    turnEnded(outcome.status, Date.parse(outcome.endedAt) - startedAt, outcome.error?.kind);
    const threadId = this.thread().id;
    if (outcome.result)
      this.ports.conversation.publish({
        type: 'message',
        text: clipOutput(outcome.result, maxNotificationText),
      });
    const detail = outcome.error
      ? `turn ${turn} failed: ${outcome.error.kind}: ${outcome.error.message}`
      : `turn ${turn} ${outcome.status}`;
    this.ports.conversation.publish({
      type: 'status',
      event: outcome.status === 'interrupted' ? 'turn-interrupted' : 'turn-end',
      threadId,
      detail,
    });
    this.ports.turnEnded(outcome, this.state.turnRequested && !this.stopRequested ? 'running' : 'idle');
  }

  private async runTool(
    name: string,
    input: unknown,
    { local, unlessNeedsApproval }: { local?: boolean; unlessNeedsApproval?: boolean },
  ): Promise<unknown> {
    const thread = this.thread();
    if (!allowsTool(thread.tools, name)) {
      throw new KitError(
        ErrorKind.PermissionDenied,
        `tool ${name} is not in the allow-list of ${thread.path}`,
      );
    }
    return (local ? runLocalTool : runTool)({
      threadId: thread.id,
      name,
      input,
      ...(unlessNeedsApproval ? { unlessNeedsApproval: true as const } : {}),
    });
  }
}
