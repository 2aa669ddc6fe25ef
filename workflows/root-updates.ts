import { currentUpdateInfo, setHandler } from '@temporalio/workflow';
import { ReconcileRequest, WaitRequest, type ShutdownReport } from '../domain/control';
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
} from '../domain/messages';
import type { RootRunState } from '../domain/run-state';
import { ControlScope, RemoteSpawnRequest, SendMessageRequest, SpawnRequest } from '../domain/schemas';
import { guarded } from './failures';
import type { RootHost } from './root-host';

/**
 * Registers the root run's updates. Validators check the payload shape and the caller's scope, so a
 * malformed or foreign request is rejected without a trace in history (SPEC S2.4); the handlers decide.
 */
export function registerRootUpdates(
  host: RootHost,
  state: RootRunState,
  root: { finish(status: 'completed' | 'cancelled'): Promise<ShutdownReport> },
): void {
  const validScope = (scope: unknown) => {
    // While the run prepares to continue-as-new, new updates are refused (a rejection leaves no trace in
    // history) and the client retries them on the next run, so a steady stream cannot hold it back.
    if (host.releasing) {
      throw new KitError(ErrorKind.Integration, `root run ${state.rootId} is continuing as new: retry`, {
        retryAfterContinueAsNew: true,
      });
    }
    return state.caller(parseInput(ControlScope, scope, 'scope'));
  };
  /** A handler that counts toward the run's update budget (Temporal allows 2,000 per run). */
  const counted = <Args extends unknown[], Result>(handler: (...args: Args) => Result) =>
    guarded((...args: Args): Result => {
      host.updatesThisRun += 1;
      return handler(...args);
    });
  const rootOnly = (scope: unknown, what: string) => {
    if (validScope(scope).thread.id !== state.rootId)
      throw new KitError(ErrorKind.PermissionDenied, `only the root may ${what}`);
  };
  const validThreadId = (scope: unknown, threadId: unknown) =>
    void (validScope(scope), parseId('thread', threadId, 'threadId'));

  setHandler(
    spawnUpdate,
    counted((scope, request) => host.execute(scope, { type: 'spawn', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(SpawnRequest, request, 'spawn request')),
      ),
    },
  );
  setHandler(
    spawnRemoteUpdate,
    counted((scope, request) => host.execute(scope, { type: 'spawn-remote', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(RemoteSpawnRequest, request, 'spawn request')),
      ),
    },
  );
  setHandler(
    sendMessageUpdate,
    counted((scope, request) => {
      // A retry whose first attempt landed on an earlier run of this root gets that attempt's message.
      const updateId = currentUpdateInfo()?.id;
      const earlier = updateId ? host.recentSends.find(updateId, request.content) : undefined;
      if (earlier) return Promise.resolve(earlier);
      const sent = host.execute(scope, { type: 'send-message', request });
      // Remembered beside, not in, the answer's promise chain: one more step there would move the update's
      // completion among the task's commands, and recorded histories would no longer replay.
      if (updateId)
        void sent.then(
          (message) => host.recentSends.remember(updateId, message),
          () => undefined,
        );
      return sent;
    }),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(SendMessageRequest, request, 'message')),
      ),
    },
  );
  setHandler(
    waitUpdate,
    counted((scope, request) => host.execute(scope, { type: 'wait', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(WaitRequest, request, 'wait request')),
      ),
    },
  );
  setHandler(
    takeRootMessagesUpdate,
    counted((scope) => state.takeRootMessages(scope)),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    revokeGrantUpdate,
    counted((scope) => state.revokeGrant(scope)),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    interruptUpdate,
    counted((scope, threadId) => host.interrupt(scope, threadId)),
    {
      validator: guarded(validThreadId),
    },
  );
  setHandler(
    closeThreadUpdate,
    counted((scope, threadId) => host.close(scope, threadId)),
    {
      validator: guarded(validThreadId),
    },
  );
  setHandler(
    reconcileUpdate,
    counted((scope, request) => host.reconcile(scope, request)),
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
