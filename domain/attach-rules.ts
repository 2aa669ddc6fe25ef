import { ErrorKind, KitError } from './errors';
import type { DelegationGrant } from './schemas';

/**
 * SPEC S3.2's rules for a new root run that hold whoever starts it — checked by the client before it
 * starts the workflow, and again by the workflow itself, so a raw Temporal client cannot skip them: the
 * run is the workflow of its root thread, its grant is for that root, and the budget is not spent.
 * Undefined when the attach may go on.
 */
export function attachRefusal(
  rootThreadId: string,
  grant: DelegationGrant,
  workflowId: string = rootThreadId,
): KitError | undefined {
  if (workflowId !== rootThreadId)
    return new KitError(
      ErrorKind.PermissionDenied,
      `the root run of ${rootThreadId} must run as workflow ${rootThreadId}, not ${workflowId}`,
    );
  if (grant.rootThreadId !== rootThreadId)
    return new KitError(
      ErrorKind.PermissionDenied,
      `the grant is for root ${grant.rootThreadId}, not ${rootThreadId}`,
    );
  if (grant.spentTokens >= grant.budgetTokens)
    return new KitError(
      ErrorKind.QuotaExceeded,
      `the grant's budget is exhausted: ${grant.spentTokens} of ${grant.budgetTokens} tokens spent`,
    );
  return undefined;
}
