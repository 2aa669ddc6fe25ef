import {
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  uuid4,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { KitError } from '../domain/errors';
import { isTerminal } from '../domain/schemas';
import { maxThreadsAsked } from '../domain/spawn-limits';
import { mintCapability } from '../domain/capability';
import { newId, relatedId } from '../domain/ids';
import { publishSignal } from '../domain/conversation-messages';
import type { RootRunState, ThreadRecord } from '../domain/run-state';
import { patches } from './patches';

/** How often, at most, a root run asks whether its earlier runs' threads still run (workflow time). */
export const askEveryMs = 30_000;

const askOptions = { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } } as const;
/** The ask as an activity (patch `earlierRunEndsAskedBeside`), and as the local one it was before. */
const { threadWorkflowEnds } = proxyActivities<ReturnType<typeof createActivities>>({
  ...askOptions,
  // Bounded even with no worker polling (a run drains its side effects before it continues as new).
  scheduleToCloseTimeout: '2 minutes',
});
const { threadWorkflowEnds: threadWorkflowEndsLocally } =
  proxyLocalActivities<ReturnType<typeof createActivities>>(askOptions);

/** Whether each path that asks takes its patch (the watch's is decided by the run's input). */
const pathPatched = {
  spawn: () => patched(patches.earlierRunEndsChecked),
  wait: () => patched(patches.earlierRunEndsOnWait),
  watch: () => true,
};

/** An ask under way, and whether it runs beside the work that made it (patch `earlierRunEndsAskedBeside`). */
interface Ask {
  asking: Promise<void>;
  beside: boolean;
}

/**
 * A thread whose workflow ended without saying so — terminated from the Web UI or CLI, timed out, or
 * already gone when its root closes it — is wound down by its root run as the thread would have done
 * itself (patch `outsideEndsWindDown`): its end is confirmed (a shutdown does not wait for it), its live
 * sub-agents are closed with it (SPEC S4.8), and its conversation is told that the thread ended, with
 * the thread's own capability, so it closes its stream and completes after its retention (S5.10).
 */
export class OutsideEnds {
  constructor(
    private readonly state: RootRunState,
    private readonly runKey: string,
    private readonly host: {
      stopThreads(records: ThreadRecord[]): void;
      track(work: Promise<void>): void;
    },
    /** The threads this run started: Temporal tells it of their closes. */
    private readonly startedHere: ReadonlyMap<string, unknown>,
  ) {}

  /**
   * The thread's workflow closed, as Temporal says. Its record is ended (confirmed) already; this is
   * what else its own ending would have done.
   */
  closed(threadId: string): void {
    if (!patched(patches.outsideEndsWindDown)) return;
    this.windDown(threadId);
  }

  /**
   * A close signal to the thread failed: when its workflow is gone (it closed after the run that
   * started it continued as new, so no run was told), its end is confirmed as the close decided it.
   * True when it was.
   */
  closeFailed(threadId: string, error: unknown): boolean {
    const record = this.state.record(threadId);
    if (!record || record.ended || !workflowGone(error)) return false;
    if (!patched(patches.outsideEndsWindDown)) return false;
    this.state.threadEnded(threadId, record.thread.status, new Date().toISOString(), true);
    this.windDown(threadId);
    return true;
  }

  /**
   * `admit()`, or — refused for room (maxConcurrent) while threads started by the run's earlier runs
   * count live — a promise of `admit()` again once it has asked whether their workflows still run and
   * wound down those that ended (patch `earlierRunEndsChecked`). Temporal tells a run only of the closes
   * of the workflows it started itself, so one terminated after its root continued as new held its slot
   * for good. Asked at most once per {@link askEveryMs}.
   */
  admit<Admitted>(admit: () => Admitted): Admitted | Promise<Admitted> {
    try {
      return admit();
    } catch (error) {
      const full =
        KitError.is(error) && (error.details as { limit?: unknown } | undefined)?.limit === 'maxConcurrent';
      if (!full) throw error;
      const live = this.state.liveBelow(this.state.rootId).map((record) => record.thread.id);
      const ask = this.askAbout(live, 'spawn');
      if (!ask) throw error;
      return ask.asking.then(admit);
    }
  }

  /**
   * Before a wait on threads none of which is idle or ended (SPEC S4.7): when one of them was started by
   * an earlier run, it asks whether their workflows still run and winds down those that ended, so a wait
   * on a thread terminated after its root continued as new answers at once instead of at its timeout
   * (patch `earlierRunEndsOnWait`). The ask runs beside the wait, as a side effect, and the wait's
   * condition sees the ends it finds, so a slow ask does not hold the wait past its timeout (patch
   * `earlierRunEndsAskedBeside`; before it, a promise the wait awaited first). Undefined when nothing
   * was asked (the wait issues its commands as before) or the ask runs beside the wait.
   */
  beforeWait(threadIds: readonly string[]): Promise<void> | undefined {
    const ask = this.askAbout(threadIds, 'wait');
    if (!ask?.beside) return ask?.asking;
    this.host.track(ask.asking);
    return undefined;
  }

  /**
   * Asks about those of `threadIds` that an earlier run started and that are still live, unless there are
   * none, the last ask was within {@link askEveryMs}, or the path's patch says no (asked last, only when
   * the ask would run); undefined when it does not ask. The watch's path is decided by the run's input:
   * no patch, and always an activity.
   */
  private askAbout(threadIds: readonly string[], path: keyof typeof pathPatched): Ask | undefined {
    const earlier = threadIds.filter((threadId) => this.liveFromEarlierRun(threadId));
    if (earlier.length === 0 || Date.now() - this.askedAt < askEveryMs) return undefined;
    if (!pathPatched[path]()) return undefined;
    this.askedAt = Date.now();
    const asActivity = path === 'watch' || patched(patches.earlierRunEndsAskedBeside);
    return {
      asking: this.windDownEnded(earlier, asActivity ? threadWorkflowEnds : threadWorkflowEndsLocally),
      beside: asActivity,
    };
  }

  /**
   * Every `everyMs` of workflow time, until `over()`, asks whether the threads that count live when the
   * run starts — all started by its earlier runs — still run, and winds down those that ended, until
   * none is left (the `outsideEndsCheckMs` feature of the run's input, SPEC S4.4): a thread terminated
   * from outside after its root continued as new is listed as it ended within about `everyMs`, with no
   * operation needed to find it. A timer and an activity a period (none in a first run, or with no such
   * thread); shares the limit of one ask per {@link askEveryMs}.
   */
  async watch(everyMs: number, over: () => boolean): Promise<void> {
    let earlier = this.state.liveBelow(this.state.rootId).map((record) => record.thread.id);
    for (;;) {
      earlier = earlier.filter((threadId) => this.liveFromEarlierRun(threadId));
      if (earlier.length === 0 || (await condition(over, everyMs))) return;
      // The watch is a tracked side effect itself: a release waits for the ask it is in.
      await this.askAbout(earlier, 'watch')?.asking;
    }
  }

  /** Live, not the root, and not started by this run (so Temporal would not tell it of its close). */
  private liveFromEarlierRun(threadId: string): boolean {
    const record = this.state.record(threadId);
    return (
      !!record &&
      !record.ended &&
      !isTerminal(record.thread.status) &&
      threadId !== this.state.rootId &&
      !this.startedHere.has(threadId)
    );
  }

  private askedAt = -Infinity;

  /** Asks whether the threads' workflows still run; ends and winds down those that do not. */
  private async windDownEnded(threadIds: string[], ask: typeof threadWorkflowEnds): Promise<void> {
    const ended = await ask(threadIds.slice(0, maxThreadsAsked)).catch((error: unknown) => {
      log.warn('could not ask whether threads of earlier runs still run', { error: String(error) });
      return [];
    });
    for (const { threadId, status } of ended) {
      const record = this.state.record(threadId);
      if (!record || record.ended || isTerminal(record.thread.status)) continue;
      this.state.threadEnded(threadId, status, new Date().toISOString(), true);
      this.windDown(threadId);
    }
  }

  /** Its status is the one its record ended with (a close before it decides: cancelled). */
  private windDown(threadId: string): void {
    this.host.stopThreads(this.state.closeBelow(threadId, new Date().toISOString()));
    const thread = this.state.record(threadId)?.thread;
    if (!thread) return;
    const from = mintCapability(this.runKey, thread.rootId, this.state.lineageOf(thread.id), thread.id);
    const notification = {
      id: newId('notification', uuid4),
      createdAt: new Date().toISOString(),
      body: { type: 'status' as const, event: 'thread-end', threadId: thread.id, detail: thread.status },
    };
    // Its conversation may never have started (the thread ended first): then there is nothing to tell.
    this.host.track(
      getExternalWorkflowHandle(relatedId('conversation', threadId)).signal(publishSignal, {
        notifications: [notification],
        from,
      }),
    );
  }
}

/**
 * Whether a failed signal says its target workflow does not run (any more): the SDK fails it with an
 * `ApplicationFailure` whose type is Temporal's cause, not with a message to match.
 */
export const workflowGone = (error: unknown): boolean =>
  error instanceof ApplicationFailure && error.type === 'ExternalWorkflowExecutionNotFound';
