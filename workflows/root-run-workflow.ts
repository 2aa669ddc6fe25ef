import {
  allHandlersFinished,
  condition,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { answerQuery, ControlRequest, ThreadEvent, WaitRequest } from '../domain/control';
import { parseInput } from '../domain/errors';
import {
  controlRequestSignal,
  listThreadsQuery,
  loadThreadQuery,
  revokeGrantUpdate,
  runStateQuery,
  sendMessageUpdate,
  spawnRemoteUpdate,
  spawnUpdate,
  takeRootMessagesUpdate,
  threadEventSignal,
  waitUpdate,
} from '../domain/messages';
import { RootRunState } from '../domain/run-state';
import {
  allTools,
  ControlScope,
  RemoteSpawnRequest,
  RootRunInput,
  SendMessageRequest,
  SpawnRequest,
  type AgentThread,
} from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import { asFailure, guarded } from './failures';
import { kernelFor } from './kernels';
import { RootHost } from './root-host';
import { ThreadLoop } from './thread-runtime';

/**
 * Hosts one root run (SPEC S3.1): the registry, grant, counters and root mailbox live here and nowhere
 * else, every control operation of the tree is decided here, and the root agent's turns run here.
 */
export async function rootRunWorkflow(rawInput: RootRunInput): Promise<AgentThread> {
  let input: RootRunInput;
  try {
    input = parseInput(RootRunInput, rawInput, 'root run input');
  } catch (error) {
    throw asFailure(error);
  }
  const state = RootRunState.create({
    grant: input.grant,
    name: input.spec.name,
    task: input.spec.task,
    tools: input.spec.tools ?? [allTools],
    taskQueue: workflowInfo().taskQueue,
    now: new Date().toISOString(),
  });
  const rootScope: ControlScope = { rootId: state.rootId, threadId: state.rootId };
  const host = new RootHost(state, (message) => {
    if (message.triggerTurn) loop.requestTurn();
  });
  const showStatus = () => {
    const { live, total } = state.counters;
    upsertSearchAttributes([{ key: searchAttributes.status, value: state.root.status }]);
    setCurrentDetails(
      `**${state.root.status}** · turn ${state.root.turnsStarted} · ${live} live / ${total} spawned sub-agents`,
    );
  };
  const loop = new ThreadLoop(
    () => state.root,
    {
      kernel: kernelFor(input.spec),
      controls: host.rootControls(),
      takeInbox: () => state.takeRootMessages(rootScope),
      turnStarted: (turn, at) => {
        state.turnStarted(state.rootId, turn, at);
        showStatus();
      },
      turnEnded: (outcome, nextStatus) => {
        state.turnEnded(state.rootId, outcome, nextStatus);
        showStatus();
      },
    },
    { turn: 0, turnRequested: true, memory: {} },
  );

  const validScope = (scope: unknown) => state.caller(parseInput(ControlScope, scope, 'scope'));
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
  setHandler(loadThreadQuery, (scope, threadId) => answerQuery(() => state.load(scope, threadId)));
  setHandler(listThreadsQuery, (scope) => answerQuery(() => state.list(scope)));
  setHandler(runStateQuery, () => state.snapshot());
  setHandler(controlRequestSignal, (raw) => {
    const request = ControlRequest.safeParse(raw);
    // A signal cannot answer a malformed request: there is no valid caller to answer.
    if (!request.success) return;
    const { callerId, operationId, operation } = request.data;
    host.answer(callerId, operationId, { rootId: state.rootId, threadId: callerId }, operation);
  });
  setHandler(threadEventSignal, (raw) => {
    const event = ThreadEvent.safeParse(raw);
    if (event.success) host.applyEvent(event.data);
    showStatus();
  });

  showStatus();
  // The root stays for more turns while it has live sub-agents; idle and alone for the idle timeout, it completes.
  while ((await loop.run(state.grant.idleTimeoutMs)) === 'idle-timeout' && state.counters.live > 0);
  state.closeAdmission();
  state.threadEnded(state.rootId, 'completed', new Date().toISOString());
  showStatus();
  await host.drain();
  await condition(allHandlersFinished);
  return state.root;
}
