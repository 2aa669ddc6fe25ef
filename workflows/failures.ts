import { ApplicationFailure, currentUpdateInfo } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';
import { isRetryAfterContinueAsNew } from './run-lifetime';
import { updateFailed } from './workflow-metrics';

/**
 * The failure to throw from workflow code for `error`: a KitError becomes an ApplicationFailure typed by
 * its kind (SPEC S2.3); anything else (a bug) becomes an InvalidState failure, so an update handler's
 * bug fails that update instead of leaving a workflow task retrying forever.
 */
export function asFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof KitError) return error.toFailure();
  const message = error instanceof Error ? error.message : String(error);
  return new KitError(ErrorKind.InvalidState, `internal error: ${message}`, undefined, {
    cause: error,
  }).toFailure();
}

/**
 * The failure an update's validator or handler answers with, counted in `agents_kit_update_errors`
 * unless it is the refusal a client retries on the next run while this one continues as new.
 */
function updateFailure(error: unknown): ApplicationFailure {
  const failure = asFailure(error);
  if (!isRetryAfterContinueAsNew(error)) updateFailed(currentUpdateInfo()?.name, failure);
  return failure;
}

/**
 * SPEC S2.4: an update takes the arguments it names and nothing more; `extra` is what a raw client sent
 * past them (a validator's rest parameter). Refuses with Protocol instead of ignoring them.
 */
export function refuseExtraArguments(update: string, extra: readonly unknown[]): void {
  if (extra.length > 0)
    throw KitError.protocol(`${update}: takes no argument after those it names (got ${extra.length} more)`, {
      fields: ['args'],
    });
}

/**
 * Wraps an update handler or validator so that every error it throws crosses the boundary as a KitError
 * (and is counted, workflows/workflow-metrics.ts).
 */
export function guarded<Args extends unknown[], Result>(
  handler: (...args: Args) => Result,
): (...args: Args) => Result {
  return (...args: Args): Result => {
    try {
      const result = handler(...args);
      if (result instanceof Promise) {
        return result.catch((error: unknown) => {
          throw updateFailure(error);
        }) as Result;
      }
      return result;
    } catch (error) {
      throw updateFailure(error);
    }
  };
}
