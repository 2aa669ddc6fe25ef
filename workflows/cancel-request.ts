import { CancellationScope, CancelledFailure, isCancellation, patched } from '@temporalio/workflow';
import { patches } from './patches';

/**
 * SPEC S3.5, S4.8: a cancel request from Temporal (the Web UI's Cancel, `temporal workflow cancel`, a
 * client's `handle.cancel()`) becomes the workflow's own stop. Its main loop throws the cancellation
 * wherever it waited (Temporal's SDK cancels its timers and running turn); the workflow then ends the
 * way it stops, where the request no longer reaches, and the run ends as cancelled. Histories from before
 * the patch end as they did, torn down where they stood; so does a request that comes after the loop.
 */
export class CancelRequest {
  private stopped = false;

  /** Runs the main loop; on a cancel request, `stop()` says how the workflow ends instead. */
  async stopOn<Exit>(run: () => Promise<Exit>, stop: () => Exit): Promise<Exit> {
    try {
      return await run();
    } catch (error) {
      const requested = CancellationScope.current().consideredCancelled;
      if (!isCancellation(error) || !requested || !patched(patches.cancelRequestStops)) throw error;
      this.stopped = true;
      return stop();
    }
  }

  /** Runs the workflow's ending: shielded from the request that stopped it, after which the run is cancelled. */
  async end<Result>(ending: () => Promise<Result>): Promise<Result> {
    if (!this.stopped) return ending();
    await CancellationScope.nonCancellable(ending);
    throw new CancelledFailure('cancel requested: the workflow stopped first');
  }
}
