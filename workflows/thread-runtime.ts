import { condition, proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { ErrorKind, KitError, kitErrorFromFailure } from '../domain/errors';
import { allowsTool } from '../domain/schemas';
import type { AgentThread, InterAgentMessage, TurnOutcome } from '../domain/schemas';
import type { AgentControls, Kernel } from './kernel';

const { runTool } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    maximumAttempts: 5,
    nonRetryableErrorTypes: ['Protocol', 'PermissionDenied', 'NotFound', 'Unsupported', 'InvalidState'],
  },
});

/** Where a thread's turn inputs come from and where its lifecycle is reported. */
export interface ThreadPorts {
  kernel: Kernel;
  controls: AgentControls;
  /** Messages waiting for this thread, taken at the start of a turn. */
  takeInbox(turn: number): InterAgentMessage[];
  turnStarted(turn: number, at: string): void;
  turnEnded(outcome: TurnOutcome, nextStatus: 'idle' | 'running'): void;
}

/** The turn-loop state a thread carries through continue-as-new. */
export interface ThreadLoopState {
  turn: number;
  turnRequested: boolean;
  memory: Record<string, string>;
}

/**
 * Runs a thread's turns (SPEC S4.9): a turn starts when one is requested (the first task, or a message
 * with triggerTurn); the thread is idle in between; it ends when `stop` is set or it stays idle for
 * `idleTimeoutMs`.
 */
export class ThreadLoop {
  stopRequested = false;

  constructor(
    private readonly thread: () => AgentThread,
    private readonly ports: ThreadPorts,
    readonly state: ThreadLoopState,
  ) {}

  requestTurn(): void {
    this.state.turnRequested = true;
  }

  /** Runs until stopped (returns 'stopped') or idle for too long (returns 'idle-timeout'). */
  async run(idleTimeoutMs: number): Promise<'stopped' | 'idle-timeout'> {
    for (;;) {
      const woke = await condition(() => this.state.turnRequested || this.stopRequested, idleTimeoutMs);
      if (this.stopRequested) return 'stopped';
      if (!woke) return 'idle-timeout';
      await this.runTurn();
    }
  }

  private async runTurn(): Promise<void> {
    this.state.turnRequested = false;
    const turn = ++this.state.turn;
    this.ports.turnStarted(turn, new Date().toISOString());
    const inbox = this.ports.takeInbox(turn);
    let outcome: TurnOutcome;
    try {
      const answer = await this.ports.kernel.runTurn({
        thread: this.thread(),
        turn,
        inbox,
        controls: this.ports.controls,
        runTool: async (name, input) => {
          const thread = this.thread();
          if (!allowsTool(thread.tools, name))
            throw new KitError(
              ErrorKind.PermissionDenied,
              `tool ${name} is not in the allow-list of ${thread.path}`,
            );
          return runTool({ threadId: thread.id, name, input });
        },
        memory: this.state.memory,
      });
      outcome = {
        turn,
        status: 'completed',
        result: answer.text,
        tokens: answer.tokens,
        endedAt: new Date().toISOString(),
      };
    } catch (error) {
      const kitError = kitErrorFromFailure(error);
      outcome = {
        turn,
        status: 'failed',
        error: { kind: kitError?.kind ?? 'InvalidState', message: kitError?.message ?? String(error) },
        tokens: 0,
        endedAt: new Date().toISOString(),
      };
    }
    this.ports.turnEnded(outcome, this.state.turnRequested ? 'running' : 'idle');
  }
}
