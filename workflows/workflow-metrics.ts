import { log, metricMeter, type ApplicationFailure } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';

/**
 * agents-kit's metrics from workflow code, through Temporal's workflow metric meter: exported where the
 * worker's Runtime sends its metrics (Prometheus with `AGENTS_KIT_METRICS_ADDRESS`), never during replay,
 * so a workflow replayed on another worker does not count its turns again. Temporal tags each with
 * `namespace`, `taskQueue` and `workflowType` (`rootRunWorkflow`, `agentWorkflow`, `conversationWorkflow`,
 * …).
 *
 * - `agents_kit_turns` (counter): turns ended, by `outcome` (`completed`, `failed`, `interrupted`) and,
 *   for a failed one, the KitError `kind` it failed with;
 * - `agents_kit_turn_duration` (histogram, ms): a turn's workflow time from start to end, by `outcome`;
 * - `agents_kit_spawns` (counter): threads the root run admitted (a spawn's retry is not counted again);
 * - `agents_kit_update_errors` (counter): client updates refused or failed, by `update` and `kind`;
 * - `agents_kit_signals_dropped` (counter): signals that changed nothing, by `signal` and `reason`
 *   (`malformed`, `unproven`: no valid proof of the sender, SPEC S3.9; `refused`: anything else) — a
 *   rise in `unproven` is someone sending forged signals to the tree;
 * - `agents_kit_continued_as_new` (counter): runs that continued as new (SPEC S7.3).
 *
 * Recording never throws: a metric that cannot be written must not fail the workflow task it describes.
 */
function safely(write: () => void): void {
  try {
    write();
  } catch {
    // Dropped: the workflow's work is what counts.
  }
}

/** How a turn ended, as the `outcome` tag says it. */
export type TurnMetricOutcome = 'completed' | 'failed' | 'interrupted';

/** Records a turn that ran `ms` of workflow time and ended as `outcome` (`kind`: a failed turn's error). */
export function turnEnded(outcome: TurnMetricOutcome, ms: number, kind?: string): void {
  safely(() => {
    metricMeter
      .createCounter('agents_kit_turns', '1', 'turns ended, by outcome')
      .add(1, kind ? { outcome, kind } : { outcome });
    metricMeter
      .createHistogram('agents_kit_turn_duration', 'int', 'ms', 'turn duration (workflow time)')
      .record(Math.max(0, Math.round(ms)), { outcome });
  });
}

/** Records a thread the root run admitted. */
export function threadSpawned(): void {
  safely(() => metricMeter.createCounter('agents_kit_spawns', '1', 'threads admitted').add(1));
}

/** Records this run continuing as new. */
export function continuingAsNew(): void {
  safely(() => metricMeter.createCounter('agents_kit_continued_as_new', '1', 'runs continued as new').add(1));
}

/** Records a client update `update` answered with `failure` (refused by its validator or failed). */
export function updateFailed(update: string | undefined, failure: ApplicationFailure): void {
  safely(() =>
    metricMeter
      .createCounter('agents_kit_update_errors', '1', 'updates refused or failed, by kind')
      .add(1, { update: update ?? 'unknown', kind: failure.type ?? 'unknown' }),
  );
}

/** Why a signal changed nothing. */
export type DropReason = 'malformed' | 'unproven' | 'refused';

/** The reason to count for a signal whose handling threw `error`. */
export function dropReasonOf(error: unknown): DropReason {
  const kind = error instanceof KitError ? error.kind : undefined;
  if (kind === ErrorKind.Protocol) return 'malformed';
  if (kind === ErrorKind.PermissionDenied) return 'unproven';
  return 'refused';
}

/**
 * A signal `signal` changed nothing, for `reason`: logs `message` with `fields` (a warning, as before)
 * and counts it in `agents_kit_signals_dropped`.
 */
export function signalDropped(
  signal: string,
  reason: DropReason,
  message: string,
  fields: Record<string, unknown>,
): void {
  log.warn(message, { ...fields, signal, reason });
  safely(() =>
    metricMeter
      .createCounter('agents_kit_signals_dropped', '1', 'signals that changed nothing, by reason')
      .add(1, { signal, reason }),
  );
}
