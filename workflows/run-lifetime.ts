import { currentUpdateInfo, workflowInfo } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';

/** Updates one run handles before it continues as new (Temporal refuses more than 2,000 per run). */
export const maxUpdatesPerRun = 1_500;

/**
 * When a long-lived workflow continues as new (SPEC S7.3), shared by the root run, its agents and their
 * conversations: past its history budget, when Temporal suggests it, or past `maxUpdates` updates
 * ({@link maxUpdatesPerRun} unless the workflow's input sets fewer). While the root run or an agent
 * drains (`releasing`), validators refuse new updates with a retryable error that leaves no trace in
 * history, and the client sends them again to the next run, so a steady stream cannot hold it back (a
 * conversation instead answers its waiting receives at once and carries what is published meanwhile).
 */
export class RunLifetime {
  releasing = false;
  updates = 0;

  constructor(
    private readonly continueAsNewAfterEvents: number,
    private readonly maxUpdates = maxUpdatesPerRun,
  ) {}

  /** Counts an update toward this run's budget. */
  count(): void {
    this.updates += 1;
  }

  /** Time to continue as new. */
  get due(): boolean {
    const info = workflowInfo();
    return (
      info.continueAsNewSuggested ||
      info.historyLength >= this.continueAsNewAfterEvents ||
      this.updates >= this.maxUpdates
    );
  }

  /** Throws the retryable refusal while the run is continuing as new (call it in validators). */
  refuseWhileReleasing(): void {
    if (this.releasing)
      throw new KitError(ErrorKind.Integration, `${workflowInfo().workflowId} is continuing as new: retry`, {
        retryAfterContinueAsNew: true,
      });
  }
}

/** The current update's key in a workflow's recent-answer log, to answer a retry of it (undefined outside an update). */
export const updateKey = (): string | undefined => {
  const id = currentUpdateInfo()?.id;
  return id === undefined ? undefined : `update|${id}`;
};
