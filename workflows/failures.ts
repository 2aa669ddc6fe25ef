import { ApplicationFailure } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';

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

/** Wraps an update handler or validator so that every error it throws crosses the boundary as a KitError. */
export function guarded<Args extends unknown[], Result>(
  handler: (...args: Args) => Result,
): (...args: Args) => Result {
  return (...args: Args): Result => {
    try {
      const result = handler(...args);
      if (result instanceof Promise) {
        return result.catch((error: unknown) => {
          throw asFailure(error);
        }) as Result;
      }
      return result;
    } catch (error) {
      throw asFailure(error);
    }
  };
}
