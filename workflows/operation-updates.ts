import { defineUpdate, setHandler } from '@temporalio/workflow';
import type { Capability } from '../domain/capability';
import { updateNameOf, type OperationType } from '../domain/operations';
import { guarded, refuseExtraArguments } from './failures';
import type { RunLifetime } from './run-lifetime';

/**
 * What one client update of the operation table does on its owner's workflow: `check` runs in the
 * validator (it proves the caller and checks the arguments, changing nothing: a refusal leaves no trace
 * in history, SPEC S2.4), `perform` in the handler, for the caller `check` proved.
 */
export interface UpdateBody {
  check(capability: unknown, ...args: unknown[]): void;
  perform(capability: Capability, ...args: unknown[]): unknown;
}

/**
 * Registers the client update of each operation in `types` under its wire name from the table
 * (domain/operations.ts), so the updates a workflow serves are the table's rows its owner has, and a new
 * row is a compile error until `bodies` handles it. While the run continues as new, validators refuse
 * (the client retries on the next run); every handled update counts toward the run's update budget.
 */
export function registerOperationUpdates<Type extends OperationType>(
  types: readonly Type[],
  bodies: Record<Type, UpdateBody>,
  lifetime: RunLifetime,
): void {
  for (const type of types) {
    const body = bodies[type];
    setHandler(
      defineUpdate<unknown, [Capability, ...unknown[]]>(updateNameOf(type) as string),
      guarded((capability: Capability, ...args: unknown[]) => {
        lifetime.count();
        return body.perform(capability, ...args);
      }),
      {
        // Every update of the table takes the caller's capability and one argument.
        validator: guarded((capability: unknown, argument?: unknown, ...extra: unknown[]) => {
          lifetime.refuseWhileReleasing();
          refuseExtraArguments(String(type), extra);
          body.check(capability, argument);
        }),
      },
    );
  }
}
