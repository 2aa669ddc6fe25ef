import { condition, currentUpdateInfo, patched, sleep, workflowInfo } from '@temporalio/workflow';
import { sha256Hex } from '../domain/bytes';
import { ErrorKind, KitError } from '../domain/errors';
import { maxRememberedId } from '../domain/recent-answers';
import { patches } from './patches';

/** Updates one run handles before it continues as new (Temporal refuses more than 2,000 per run). */
export const maxUpdatesPerRun = 1_500;

/**
 * How long a run lives, from its execution time, before it continues as new: Temporal's
 * `history.workflowIdReuseMinimalInterval` (1 s by default) and a margin. A run that continues sooner
 * gets its successor's first workflow task held back by the difference, counted from the execution
 * time; an update starts a run's task before that time anyway, so without this runs kept busy by updates
 * pushed each successor's backoff further, and a run that then got only signals sat for minutes.
 */
export const minimumRunLifetimeMs = 1_100;

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
  /** Toward {@link minimumRunLifetimeMs}: not asked yet, a timer running, or old enough. */
  private age: 'unchecked' | 'waiting' | 'old-enough' = 'unchecked';

  constructor(
    private readonly continueAsNewAfterEvents: number,
    private readonly maxUpdates = maxUpdatesPerRun,
  ) {}

  /** Counts an update toward this run's budget. */
  count(): void {
    this.updates += 1;
  }

  /** Time to continue as new: pressed, or past the history budget. */
  get due(): boolean {
    return this.pressing || workflowInfo().historyLength >= this.continueAsNewAfterEvents;
  }

  /** Due for a reason the run may not put off: Temporal suggests it, or the run took its most updates. */
  get pressing(): boolean {
    return workflowInfo().continueAsNewSuggested || this.updates >= this.maxUpdates;
  }

  /** Due, but still waiting out {@link minimumRunLifetimeMs} (the run goes on serving meanwhile). */
  get ageingToContinue(): boolean {
    return this.age === 'waiting';
  }

  /**
   * True once this run has lived {@link minimumRunLifetimeMs} from its execution time. Before that it
   * starts one timer (behind a patch, so histories from before it replay as they ran) and answers false
   * until the timer fires. Call it from workflow code when {@link due}, never from a condition.
   */
  mayContinue(): boolean {
    if (this.age !== 'unchecked') return this.age === 'old-enough';
    const info = workflowInfo();
    // The execution time is the run's start plus its first task's backoff; the first task started no
    // earlier than the run, so this bound is never before it.
    const executionTimeBound = info.runStartTime.getTime() + (info.cronScheduleToScheduleInterval ?? 0);
    const waitMs = executionTimeBound + minimumRunLifetimeMs - Date.now();
    if (waitMs <= 0 || !patched(patches.continueAsNewPaced)) {
      this.age = 'old-enough';
      return true;
    }
    this.age = 'waiting';
    // A cancel request cancels the timer: its rejection is handled here (an unhandled one fails the task).
    void sleep(waitMs).then(
      () => (this.age = 'old-enough'),
      () => undefined,
    );
    return false;
  }

  /** Waits until {@link mayContinue}. */
  async ripen(): Promise<void> {
    if (!this.mayContinue()) await condition(() => this.age === 'old-enough');
  }

  /** The run stays after all (a cancel request while it released, SPEC S3.5): updates are taken again. */
  stay(): void {
    this.releasing = false;
  }

  /** Throws the retryable refusal while the run is continuing as new (call it in validators). */
  refuseWhileReleasing(): void {
    if (this.releasing)
      throw new KitError(ErrorKind.Integration, `${workflowInfo().workflowId} is continuing as new: retry`, {
        retryAfterContinueAsNew: true,
      });
  }
}

/** Whether `error` is {@link RunLifetime.refuseWhileReleasing}'s refusal, which the client retries. */
export const isRetryAfterContinueAsNew = (error: unknown): boolean =>
  error instanceof KitError &&
  (error.details as { retryAfterContinueAsNew?: boolean } | undefined)?.retryAfterContinueAsNew === true;

/**
 * The current update's key in a workflow's recent-answer log, to answer a retry of it (undefined outside
 * an update). An update id longer than the log keeps (Temporal takes any length) is keyed by its hash
 * (patch `longUpdateIdsRemembered`; before it such an update was not remembered, and its retry on a later
 * run took effect again). `inValidator`: a validator leaves no history, so it asks no patch.
 */
export const updateKey = (inValidator = false): string | undefined => {
  const id = currentUpdateInfo()?.id;
  if (id === undefined) return undefined;
  const key = `update|${id}`;
  if (key.length <= maxRememberedId) return key;
  return inValidator || patched(patches.longUpdateIdsRemembered) ? `update#${sha256Hex(id)}` : key;
};
