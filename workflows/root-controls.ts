import { condition, patched } from '@temporalio/workflow';
import { AskedTurns } from '../domain/asked-turns';
import { WaitRequest, type WaitResult } from '../domain/control';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { parseId } from '../domain/ids';
import type { RootRunState } from '../domain/run-state';
import {
  isTerminal,
  SendMessageRequest,
  type AgentThread,
  type ControlScope,
  type InterAgentMessage,
} from '../domain/schemas';
import { callBudget } from './call-budget';
import { patches } from './patches';
import type { AgentControls } from './kernel';
import type { RootHost } from './root-host';
import type { OutsideEnds } from './outside-ends';
import type { RunLifetime } from './run-lifetime';

/**
 * The controls of the root kernel for its turn `turn`: bound to the root's scope, and stale once that
 * turn is over or the root has ended (SPEC S3.8), so old authority cannot leak into a later turn.
 */
export function rootControlsFor(
  host: RootHost,
  turn: number,
  currentTurn: () => number,
  asked: AskedTurns,
): AgentControls {
  const { state } = host;
  const scope = { rootId: state.rootId, threadId: state.rootId };
  const current = () => {
    if (currentTurn() !== turn || isTerminal(state.root.status)) {
      throw new KitError(
        ErrorKind.InvalidState,
        `these root controls belong to root turn ${turn}, which is over`,
      );
    }
  };
  const execute: RootHost['execute'] = (callerScope, operation) => {
    current();
    return host.execute(callerScope, operation);
  };
  return {
    spawn: async (request) => execute(scope, { type: 'spawn', request }),
    spawnRemote: async (request) => execute(scope, { type: 'spawn-remote', request }),
    sendMessage: async (request) => {
      const sent = await execute(scope, { type: 'send-message', request });
      asked.note(sent.recipient, sent);
      return sent;
    },
    loadThread: async (threadId) => execute(scope, { type: 'load-thread', threadId }),
    listThreads: async () => execute(scope, { type: 'list-threads' }),
    // SPEC S4.7: a thread the root triggered counts once that turn ended. A replay of a run from before
    // waits as it did; the marker is paid only by a wait that carries an asked turn.
    wait: (request) =>
      asked.wait(parseInput(WaitRequest, request, 'wait request'), (filled, parsed) =>
        execute(scope, {
          type: 'wait',
          request: filled !== parsed && patched(patches.rootWaitCountsAskedTurns) ? filled : parsed,
        }),
      ),
    interrupt: async (threadId) => execute(scope, { type: 'interrupt', threadId }),
    close: async (threadId) => execute(scope, { type: 'close', threadId }),
    // The root's budget is in this workflow: charging it costs no round trip.
    charge: async (tokens) => execute(scope, { type: 'charge', tokens }),
    chargeReported: async (tokens) => {
      current();
      return state.chargeReported(scope, tokens);
    },
    ...(host.options.usageLedger
      ? {
          // Settled even once the turn is over: an interrupted call gives its reservation back.
          calls: callBudget(
            {
              reserve: (tokens) => {
                current();
                state.reserveCall(scope, tokens);
              },
              settle: (reserved, used) => state.settleCall(scope, reserved, used),
            },
            // SPEC S11.3: a tree with a budget in dollars holds each call to it too.
            state.hasDollarBudget(scope.threadId)
              ? {
                  reserve: (microUsd) => state.reserveCall(scope, microUsd, 'microUsd'),
                  settle: (reserved, used) => state.settleCall(scope, reserved, used, 'microUsd'),
                }
              : undefined,
          ),
        }
      : {}),
  };
}

/** The root kernel's controls for each of its turns, with one memory of the turns its messages asked. */
export function rootControlsOf(host: RootHost, currentTurn: () => number): (turn: number) => AgentControls {
  const asked = new AskedTurns();
  return (turn) => rootControlsFor(host, turn, currentTurn, asked);
}

/**
 * SPEC S4.7: the threads' latest turns once one of them is idle or terminal, `timedOut` otherwise; a wait
 * cut short because the run continues as new answers `resume` and the caller waits again.
 */
export async function waitForTurns(
  state: RootRunState,
  scope: ControlScope,
  rawRequest: unknown,
  lifetime: Pick<RunLifetime, 'releasing'>,
  earlier: Pick<OutsideEnds, 'beforeWait'>,
): Promise<WaitResult> {
  const request = parseInput(WaitRequest, rawRequest, 'wait request');
  for (const threadId of request.threadIds) {
    if (!state.load(scope, parseId('thread', threadId, 'threadIds'))) {
      throw new KitError(ErrorKind.NotFound, `thread ${threadId} is not in the subtree of the caller`);
    }
  }
  const threads = () => request.threadIds.map((threadId) => state.record(threadId)!.thread);
  const counts = (thread: AgentThread) => {
    const turn = request.turns?.[thread.id];
    if (isTerminal(thread.status)) return true;
    return turn === undefined ? thread.status === 'idle' : thread.turnsCompleted >= turn;
  };
  const settled = () => threads().some(counts);
  const deadline = Date.now() + request.timeoutMs;
  // Threads its earlier runs started may have ended unheard of: asked beside the wait, whose condition
  // sees what the ask finds (awaited first in histories from before `earlierRunEndsAskedBeside`).
  const asking = request.timeoutMs === 0 || settled() ? undefined : earlier.beforeWait(request.threadIds);
  if (asking) await asking;
  const leftMs = deadline - Date.now();
  const ready = leftMs <= 0 ? settled() : await condition(() => settled() || lifetime.releasing, leftMs);
  return {
    timedOut: !ready || !settled(),
    ...(lifetime.releasing && !settled() ? { resume: true } : {}),
    outcomes: threads().map((thread) => ({
      threadId: thread.id,
      status: thread.status,
      ...(thread.latestTurn ? { latestTurn: thread.latestTurn } : {}),
    })),
  };
}

/**
 * SPEC S5.4: a thread's interactions are answered at its own workflow, by itself or an ancestor. The
 * root's are answered by its own capability (a client's update); a thread of the tree is never its
 * ancestor, and another thread's interaction is not the root run's to answer.
 */
export const resolveRefusal = (rootId: string, scope: ControlScope, threadId: string): KitError =>
  threadId === rootId
    ? new KitError(
        ErrorKind.PermissionDenied,
        `thread ${scope.threadId} may not answer the root's interactions`,
      )
    : new KitError(
        ErrorKind.InvalidState,
        `resolve ${threadId}'s interactions at its own workflow, not the root run's`,
      );

/**
 * SPEC S4.3: a message from the root's controls, numbered by the recipient's workflow (SPEC S3.1); the
 * root's own mailbox is numbered by its thread operations, like every thread's.
 */
export async function sendFromRoot(
  host: Pick<RootHost, 'state' | 'transport'>,
  scope: ControlScope,
  rawRequest: unknown,
): Promise<InterAgentMessage> {
  const request = parseInput(SendMessageRequest, rawRequest, 'message');
  // The root's controls may not message the root itself (it is not its own ancestor or descendant).
  host.state.checkMessage(scope, request);
  // Asked here by a thread only when the recipient's workflow is gone (it is not running).
  if (scope.threadId !== host.state.rootId)
    throw new KitError(ErrorKind.Closed, `thread ${request.recipient} has no running workflow`);
  const sent = (await host.transport.call(request.recipient, {
    type: 'send-message',
    request,
  })) as Omit<InterAgentMessage, 'content'>;
  return { ...sent, content: request.content };
}
