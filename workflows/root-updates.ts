import { setHandler } from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';

import { ReconcileRequest, type ControlOperationInput, type ShutdownReport } from '../domain/control';
import { checkUpdateBytes } from '../domain/answer-bounds';
import { controlOperations, WaitRequest } from '../domain/operations';
import type { Capability } from '../domain/capability';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { parseId } from '../domain/ids';
import {
  closeThreadUpdate,
  completeRootUpdate,
  interruptUpdate,
  reconcileUpdate,
  revokeGrantUpdate,
  sendMessageUpdate,
  shutdownUpdate,
  spawnRemoteUpdate,
  spawnUpdate,
  takeRootMessagesUpdate,
  waitUpdate,
  type MessageReceipt,
} from '../domain/messages';
import type { RootRunState } from '../domain/run-state';
import { SendMessageRequest, type ControlScope } from '../domain/schemas';
import { guarded } from './failures';
import { longPollMs, type PollSlots } from './poll-slots';
import { updateKey } from './run-lifetime';
import type { RootHost } from './root-host';
import type { ThreadAuthority } from './thread-authority';

/**
 * Registers the root run's updates. Validators check the payload shape and the caller's capability
 * (SPEC S3.9), so a malformed, foreign or forged request is rejected without a trace in history (SPEC
 * S2.4); the handlers decide.
 */
export function registerRootUpdates(
  host: RootHost,
  state: RootRunState,
  authority: ThreadAuthority,
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

  // Operations whose whole argument is one request, checked by the table's schema (domain/operations.ts).
  const requestOperations = [
    [spawnUpdate, 'spawn', 'spawn request'],
    [spawnRemoteUpdate, 'spawn-remote', 'spawn request'],
  ] as const;
  for (const [update, type, what] of requestOperations) {
    const schema = controlOperations[type].args.request;
    setHandler(
      update as UpdateDefinition<unknown, [Capability, unknown]>,
      counted((capability, request) =>
        host.execute(scopeOf(capability), { type, request } as ControlOperationInput),
      ),
      {
        validator: guarded((scope: unknown, request: unknown) => {
          validScope(scope);
          parseInput(schema, request, what);
          checkUpdateBytes(request, what);
        }),
      },
    );
  }
  // A client's wait holds one of the run's few update slots: it answers within longPollMs (`resume`) and
  // the client waits again for the time left (SPEC S3.10).
  setHandler(
    waitUpdate,
    counted((capability, raw) =>
      slots.hold(async () => {
        const request = parseInput(WaitRequest, raw, 'wait request');
        const timeoutMs = Math.min(request.timeoutMs, longPollMs);
        const result = await host.execute(scopeOf(capability), {
          type: 'wait',
          request: { ...request, timeoutMs },
        });
        return result.timedOut && timeoutMs < request.timeoutMs ? { ...result, resume: true } : result;
      }),
    ),
    {
      validator: guarded((scope: unknown, request: unknown) => {
        validScope(scope);
        parseInput(WaitRequest, request, 'wait request');
        slots.check('wait');
      }),
    },
  );
  setHandler(
    sendMessageUpdate,
    counted(async (capability, request) => {
      // A retry whose first attempt landed on an earlier run of this root gets that attempt's message.
      const key = updateKey();
      const earlier = host.recent.find(key, request) as MessageReceipt | undefined;
      if (earlier) return earlier;
      const message = await host.execute(scopeOf(capability), { type: 'send-message', request });
      const { content: _content, ...receipt } = message;
      host.recent.remember(key, request, receipt);
      return receipt;
    }),
    {
      validator: guarded((capability: unknown, request: unknown) => {
        validScope(capability);
        const parsed = parseInput(SendMessageRequest, request, 'message');
        // SPEC S3.1: the root run numbers only the root's mailbox; every other thread numbers its own.
        if (parsed.recipient !== state.rootId)
          throw new KitError(
            ErrorKind.InvalidState,
            `the root run takes messages for the root only: send to ${parsed.recipient}'s own workflow`,
          );
      }),
    },
  );
  setHandler(
    takeRootMessagesUpdate,
    counted((capability) => state.takeRootMessages(scopeOf(capability))),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    revokeGrantUpdate,
    counted((capability) => state.revokeGrant(scopeOf(capability))),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    interruptUpdate,
    counted(async (capability, threadId) => {
      const key = updateKey();
      const earlier = host.recent.find(key, threadId);
      if (earlier) return earlier as Awaited<ReturnType<RootHost['interrupt']>>;
      const receipt = await host.interrupt(scopeOf(capability), threadId);
      host.recent.remember(key, threadId, receipt);
      return receipt;
    }),
    {
      validator: guarded((capability: unknown, threadId: unknown) => {
        validThreadId(capability, threadId);
        if (threadId !== state.rootId)
          throw new KitError(
            ErrorKind.InvalidState,
            `the root run interrupts the root only: send the interrupt to ${String(threadId)}'s own workflow`,
          );
      }),
    },
  );
  setHandler(
    closeThreadUpdate,
    counted((capability, threadId) => host.close(scopeOf(capability), threadId)),
    {
      validator: guarded(validThreadId),
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
      validator: guarded((scope: unknown) => rootOnly(scope, 'shut the run down')),
    },
  );
  setHandler(
    completeRootUpdate,
    counted(() => root.finish('completed')),
    {
      validator: guarded((scope: unknown) => rootOnly(scope, 'complete the root')),
    },
  );
}
