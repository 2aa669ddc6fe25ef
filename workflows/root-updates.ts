import { currentUpdateInfo, patched, setHandler } from '@temporalio/workflow';

import { ReconcileRequest, type ControlOperationInput, type ShutdownReport } from '../domain/control';
import { checkUpdateBytes } from '../domain/answer-bounds';
import { sha256Hex } from '../domain/bytes';
import { checkChangeNamesAList, type ApprovalPolicy } from '../domain/approval-policy';
import { controlOperations, rootUpdateTypes, WaitRequest } from '../domain/operations';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { parseId } from '../domain/ids';
import {
  completeRootUpdate,
  reconcileUpdate,
  revokeGrantUpdate,
  setApprovalPolicyUpdate,
  shutdownUpdate,
  takeRootMessagesUpdate,
} from '../domain/messages';
import type { RootRunState } from '../domain/run-state';
import type { ControlScope } from '../domain/schemas';
import { guarded, refuseExtraArguments } from './failures';
import { patches } from './patches';
import { registerOperationUpdates, type UpdateBody } from './operation-updates';
import { longPollMs, type PollSlots } from './poll-slots';
import { takenOnce } from './root-drain';
import type { RootHost } from './root-host';
import { updateKey } from './run-lifetime';
import type { ThreadAuthority } from './thread-authority';
import { policyOrRefusal, type TreeApprovalPolicy } from './tree-approval-policy';

/**
 * Registers the root run's updates. Validators check the payload shape and the caller's capability
 * (SPEC S3.9), so a malformed, foreign or forged request is rejected without a trace in history (SPEC
 * S2.4); the handlers decide.
 */
export function registerRootUpdates(
  host: RootHost,
  state: RootRunState,
  authority: ThreadAuthority,
  policy: TreeApprovalPolicy | undefined,
  root: { finish(status: 'completed' | 'cancelled'): Promise<ShutdownReport> },
  slots: PollSlots,
): void {
  /** The proven caller's scope. */
  const scopeOf = (capability: unknown): ControlScope => {
    const caller = authority.caller(capability);
    return { rootId: caller.rootId, threadId: caller.threadId };
  };
  const validScope = (capability: unknown) => {
    // While the run prepares to continue-as-new, new updates are refused (a rejection leaves no trace in
    // history) and the client retries them on the next run, so a steady stream cannot hold it back.
    host.lifetime.refuseWhileReleasing();
    return state.caller(scopeOf(capability));
  };
  /** A handler that counts toward the run's update budget (Temporal allows 2,000 per run). */
  const counted = <Args extends unknown[], Result>(handler: (...args: Args) => Result) =>
    guarded((...args: Args): Result => {
      host.lifetime.count();
      return handler(...args);
    });
  const rootOnly = (scope: unknown, what: string) => {
    if (validScope(scope).thread.id !== state.rootId)
      throw new KitError(ErrorKind.PermissionDenied, `only the root may ${what}`);
  };
  const validThreadId = (scope: unknown, threadId: unknown) =>
    void (validScope(scope), parseId('thread', threadId, 'threadId'));
  /**
   * SPEC S3.10: a policy change is applied once per update id, also when its retry lands on a later run
   * (patch `policyChangeRemembered`): the retry gets the policy the change made, or — when that was too
   * large to remember — the policy now, never the change applied again over a newer one.
   */
  const rememberedChange = (change: unknown) => {
    const tree = policyOrRefusal(policy);
    if (!patched(patches.policyChangeRemembered)) return tree.change(change);
    const key = updateKey();
    const earlier = host.recent.find(key, change) as { version: number } | ApprovalPolicy | undefined;
    if (earlier !== undefined) return 'neverAsk' in earlier ? earlier : tree.policy;
    const answer = tree.change(change);
    if (!host.recent.remember(key, change, answer))
      host.recent.remember(key, change, { version: answer.version });
    return answer;
  };

  /** A spawn: its whole argument is one request, checked by the table's schema (domain/operations.ts). */
  const spawnBody = (type: 'spawn' | 'spawn-remote'): UpdateBody => ({
    check: (scope, request) => {
      validScope(scope);
      parseInput(controlOperations[type].args.request, request, 'spawn request');
      checkUpdateBytes(request, 'spawn request');
    },
    perform: (capability, request) =>
      host.execute(scopeOf(capability), { type, request: keyedByUpdate(request) } as ControlOperationInput),
  });
  /**
   * SPEC S3.10: a spawn naming no request id gets one made from its update id, which the registry keeps
   * across continue-as-new, so a retry of the update on a later run returns the thread it spawned.
   */
  const keyedByUpdate = (request: unknown): unknown => {
    const updateId = currentUpdateInfo()?.id;
    if (updateId === undefined || (request as { requestId?: unknown }).requestId !== undefined)
      return request;
    if (!patched(patches.spawnKeyedByUpdate)) return request;
    return { ...(request as object), requestId: `request_${sha256Hex(`update|${updateId}`).slice(0, 32)}` };
  };
  // The table's root operations that clients reach by update. The root's own thread operations (its
  // mailbox, its turn) are served like any thread's, by ThreadOperations.
  registerOperationUpdates(
    rootUpdateTypes,
    {
      spawn: spawnBody('spawn'),
      'spawn-remote': spawnBody('spawn-remote'),
      // A client's wait holds one of the run's few update slots: it answers within longPollMs
      // (`resume`) and the client waits again for the time left (SPEC S3.10).
      wait: {
        check: (scope, request) => {
          validScope(scope);
          parseInput(WaitRequest, request, 'wait request');
          slots.check('wait');
        },
        perform: (capability, raw) =>
          slots.hold(async () => {
            const request = parseInput(WaitRequest, raw, 'wait request');
            const timeoutMs = Math.min(request.timeoutMs, longPollMs);
            const result = await host.execute(scopeOf(capability), {
              type: 'wait',
              request: { ...request, timeoutMs },
            });
            return result.timedOut && timeoutMs < request.timeoutMs ? { ...result, resume: true } : result;
          }),
      },
      close: {
        check: validThreadId,
        perform: (capability, threadId) => host.close(scopeOf(capability), threadId),
      },
    },
    host.lifetime,
  );
  setHandler(
    takeRootMessagesUpdate,
    counted((capability) =>
      takenOnce(host.recent, updateKey(), () => state.takeRootMessages(scopeOf(capability))),
    ),
    {
      validator: guarded((scope: unknown, ...extra: unknown[]) => {
        refuseExtraArguments('take-root-messages', extra);
        validScope(scope);
      }),
    },
  );
  setHandler(
    revokeGrantUpdate,
    counted((capability) => state.revokeGrant(scopeOf(capability))),
    {
      validator: guarded((scope: unknown, ...extra: unknown[]) => {
        refuseExtraArguments('revoke-grant', extra);
        validScope(scope);
      }),
    },
  );
  setHandler(
    reconcileUpdate,
    counted((capability, request) => host.reconcile(scopeOf(capability), request)),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(ReconcileRequest, request, 'reconcile request')),
      ),
    },
  );
  setHandler(
    shutdownUpdate,
    counted(() => root.finish('cancelled')),
    {
      validator: guarded((scope: unknown, ...extra: unknown[]) => {
        refuseExtraArguments('shutdown', extra);
        rootOnly(scope, 'shut the run down');
      }),
    },
  );
  // SPEC S11.4: the tree's approval policy is the root's to change.
  setHandler(
    setApprovalPolicyUpdate,
    counted((_capability, change) => rememberedChange(change)),
    {
      validator: guarded((scope: unknown, change: unknown, ...extra: unknown[]) => {
        refuseExtraArguments('set-approval-policy', extra);
        rootOnly(scope, 'change the approval policy');
        policyOrRefusal(policy).checkChange(change);
        checkChangeNamesAList(change);
      }),
    },
  );
  setHandler(
    completeRootUpdate,
    counted(() => root.finish('completed')),
    {
      validator: guarded((scope: unknown, ...extra: unknown[]) => {
        refuseExtraArguments('complete-root', extra);
        rootOnly(scope, 'complete the root');
      }),
    },
  );
}
