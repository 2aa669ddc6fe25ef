import { CancellationScope, CancelledFailure, isCancellation, patched } from '@temporalio/workflow';
import { patches } from './patches';

/**
 * SPEC S3.5, S4.8: a cancel request from Temporal (the Web UI's Cancel, `temporal workflow cancel`, a
 * client's `handle.cancel()`) becomes the workflow's own stop. Its main loop throws the cancellation
 * wherever it waited (Temporal's SDK cancels its timers and running turn); the workflow then ends the
 * way it stops, where the request no longer reaches, and the run ends as cancelled.
 *
 * A request that comes once the workflow is ending by itself (a close, a shutdown, an idle timeout)
 * lets the ending finish — with what it waits for, `shield`ed — and the run then ends as cancelled: the
 * root run closes its sub-agents with a signal and Temporal's cancel request at once, and the two often
 * land in one task. Histories from before either patch end as they did, torn down where they stood.
 * Construct it in the workflow's root scope.
 */
export class CancelRequest {
  private stopped = false;
  private requested = false;
  private ending = false;
  private ended = false;
  private readonly shields = new Set<CancellationScope>();

  constructor() {
    void CancellationScope.current().cancelRequested.catch(() => {
      this.requested = true;
      this.arrived();
    });
  }

  /**
   * Runs the main loop (or the release before continue-as-new, under its own patch); on a cancel
   * request, `stop()` says how the workflow ends instead.
   */
  async stopOn<Exit>(
    run: () => Promise<Exit>,
    stop: () => Exit,
    during: 'main loop' | 'release' = 'main loop',
  ): Promise<Exit> {
    try {
      return await run();
    } catch (error) {
      const requested = CancellationScope.current().consideredCancelled;
      if (!isCancellation(error) || !requested) throw error;
      const stops =
        during === 'release' ? patched(patches.cancelWhileReleasing) : patched(patches.cancelRequestStops);
      if (!stops) throw error;
      this.stopped = true;
      return stop();
    }
  }

  /** Runs the workflow's ending, shielded from a cancel request; after one, the run ends as cancelled. */
  async end<Result>(ending: () => Promise<Result>): Promise<Result> {
    if (this.stopped) {
      await CancellationScope.nonCancellable(ending);
      throw new CancelledFailure('cancel requested: the workflow stopped first');
    }
    this.ending = true;
    try {
      const ended = this.shield(ending);
      // A request in the task that ended the main loop (with the close signal, say) came before this.
      if (this.requested) this.arrived();
      const result = await ended;
      if (this.stopped)
        throw new CancelledFailure('cancel requested while the workflow ended: it ended first');
      return result;
    } finally {
      this.ended = true;
    }
  }

  /** Runs `work` the ending waits for (a shutdown's wait for its sub-agents) out of a later request's reach. */
  shield<Result>(work: () => Promise<Result>): Promise<Result> {
    return CancellationScope.nonCancellable(async () => {
      const scope = new CancellationScope();
      this.shields.add(scope);
      try {
        return await scope.run(work);
      } finally {
        this.shields.delete(scope);
      }
    });
  }

  /** A request during the main loop is `stopOn`'s; one during the ending, or what it waits for, is here. */
  private arrived(): void {
    if (this.ended || (!this.ending && this.shields.size === 0)) return;
    if (patched(patches.cancelWhileEnding)) this.stopped = true;
    else for (const scope of this.shields) scope.cancel();
  }
}
