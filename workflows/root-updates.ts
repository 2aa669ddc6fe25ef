import { setHandler } from '@temporalio/workflow';
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
  const validScope = (scope: unknown) => state.caller(parseInput(ControlScope, scope, 'scope'));
  const rootOnly = (scope: unknown, what: string) => {
    if (validScope(scope).thread.id !== state.rootId)
      throw new KitError(ErrorKind.PermissionDenied, `only the root may ${what}`);
  };
  const validThreadId = (scope: unknown, threadId: unknown) =>
    void (validScope(scope), parseId('thread', threadId, 'threadId'));

  setHandler(
    spawnUpdate,
    guarded((scope, request) => host.execute(scope, { type: 'spawn', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(SpawnRequest, request, 'spawn request')),
      ),
    },
  );
  setHandler(
    spawnRemoteUpdate,
    guarded((scope, request) => host.execute(scope, { type: 'spawn-remote', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(RemoteSpawnRequest, request, 'spawn request')),
      ),
    },
  );
  setHandler(
    sendMessageUpdate,
    guarded((scope, request) => host.execute(scope, { type: 'send-message', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(SendMessageRequest, request, 'message')),
      ),
    },
  );
  setHandler(
    waitUpdate,
    guarded((scope, request) => host.execute(scope, { type: 'wait', request })),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(WaitRequest, request, 'wait request')),
      ),
    },
  );
  setHandler(
    takeRootMessagesUpdate,
    guarded((scope) => state.takeRootMessages(scope)),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    revokeGrantUpdate,
    guarded((scope) => state.revokeGrant(scope)),
    {
      validator: guarded((scope: unknown) => void validScope(scope)),
    },
  );
  setHandler(
    interruptUpdate,
    guarded((scope, threadId) => host.interrupt(scope, threadId)),
    {
      validator: guarded(validThreadId),
    },
  );
  setHandler(
    closeThreadUpdate,
    guarded((scope, threadId) => host.close(scope, threadId)),
    {
      validator: guarded(validThreadId),
    },
  );
  setHandler(
    reconcileUpdate,
    guarded((scope, request) => host.reconcile(scope, request)),
    {
      validator: guarded(
        (scope: unknown, request: unknown) =>
          void (validScope(scope), parseInput(ReconcileRequest, request, 'reconcile request')),
      ),
    },
  );
  setHandler(
    shutdownUpdate,
    guarded(() => root.finish('cancelled')),
    {
      validator: guarded((scope: unknown) => rootOnly(scope, 'shut the run down')),
    },
  );
  setHandler(
    completeRootUpdate,
    guarded(() => root.finish('completed')),
    {
      validator: guarded((scope: unknown) => rootOnly(scope, 'complete the root')),
    },
  );
}
