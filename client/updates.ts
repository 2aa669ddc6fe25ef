import type { WorkflowHandle } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { ErrorKind, KitError } from '../domain/errors';
import { toKitError } from './errors';

/**
 * Whether an update failed before the workflow saw it, so sending it again is safe: the server refused
 * the workflow task it rode on (it raced a continue-as-new), or the workflow had too many in flight, or
 * it aborted the update before accepting it.
 */
function refusedBeforeDelivery(error: unknown): boolean {
  for (let current = error, hops = 0; current instanceof Error && hops < 6; current = current.cause, hops++) {
    const code = (current as { code?: unknown }).code;
    // The root run refused it in its validator while continuing as new: nothing happened, try again.
    const details = (current as { details?: unknown[] }).details;
    // Or every long-poll slot of the workflow is taken (workflows/poll-slots.ts): try again shortly.
    const refusal = Array.isArray(details)
      ? (details[0] as { retryAfterContinueAsNew?: boolean; retryLater?: boolean } | undefined)
      : undefined;
    if (refusal?.retryAfterContinueAsNew || refusal?.retryLater) return true;
    if (code === 9 && /workflow task failure/i.test(current.message)) return true;
    // Too many updates in flight is worth a retry; a message too large for the server never is.
    if (code === 8 && !/larger than max|size limit|too large/i.test(current.message)) return true;
    if (code === 9 && /distinct updates/i.test(current.message)) return true;
    // The server dropped an update it had not accepted yet (its speculative workflow task was lost to a
    // concurrent event or a continue-as-new); an accepted update would be in history and deduplicated.
    if (code === 14 && /update was aborted/i.test(current.message)) return true;
  }
  return false;
}

/**
 * Executes an update exactly once: one update id for every attempt (Temporal deduplicates by it), retried
 * with backoff while the server refuses it before delivery. Every failure leaves as a KitError.
 */
export async function executeUpdate<Result, Args extends unknown[]>(
  handle: WorkflowHandle,
  definition: UpdateDefinition<Result, Args>,
  args: Args,
  context: string,
): Promise<Result> {
  const updateId = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      const update = handle.executeUpdate as (
        definition: UpdateDefinition<Result, Args>,
        options: { args: Args; updateId: string },
      ) => Promise<Result>;
      return await update.call(handle, definition, { args, updateId });
    } catch (error) {
      if (error instanceof Error && error.name === 'WorkflowNotFoundError')
        throw await notFoundOrClosed(handle, error, context);
      if (attempt >= 20 || !refusedBeforeDelivery(error)) throw toKitError(error, context);
      await new Promise((done) => setTimeout(done, Math.min(2000, 50 * 2 ** attempt)));
    }
  }
}

/**
 * An update to a workflow that is not running: Closed when the workflow exists but has ended (its
 * controls are closed, SPEC S3.8), NotFound when there is no such workflow. The server's message does
 * not say which reliably, so ask.
 */
async function notFoundOrClosed(handle: WorkflowHandle, error: Error, context: string): Promise<KitError> {
  const ended = await handle.describe().then(
    (description) => description.status.name !== 'RUNNING',
    () => false,
  );
  return ended
    ? new KitError(
        ErrorKind.Closed,
        `${context}: ${handle.workflowId} has ended: ${error.message}`,
        undefined,
        { cause: error },
      )
    : new KitError(
        ErrorKind.NotFound,
        `${context}: no workflow ${handle.workflowId}: ${error.message}`,
        undefined,
        { cause: error },
      );
}

/** Whether a workflow refused a call only for now: its long-poll slots were taken (nothing happened). */
export const refusedForNow = (error: unknown): boolean =>
  error instanceof KitError &&
  error.kind === ErrorKind.QuotaExceeded &&
  (error.details as { retryLater?: boolean } | undefined)?.retryLater === true;

/**
 * Runs a long-poll until a workflow has a slot for it: every long-poll slot taken (QuotaExceeded,
 * `retryLater`, workflows/poll-slots.ts) is waited out however long the slots stay busy, since a
 * subscriber or a waiter has nothing better to do; every other outcome is the call's.
 */
export async function longPoll<Result>(call: () => Promise<Result>): Promise<Result> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!refusedForNow(error)) throw error;
      await new Promise((done) => setTimeout(done, 500 + Math.floor(Math.random() * 1_000)));
    }
  }
}
