import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { answerQuery, ControlRequest, ThreadEvent, type RootRunResult } from '../domain/control';
import { parseInput } from '../domain/errors';
import {
  controlRequestSignal,
  interruptSignal,
  listThreadsQuery,
  loadThreadQuery,
  runStateQuery,
  threadEventSignal,
  threadQuery,
} from '../domain/messages';
import { RootResume, RootRunState } from '../domain/run-state';
import { allTools, RootRunInput, type ControlScope, type RootRunInputShape } from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import { asFailure } from './failures';
import { kernelFor } from './kernels';
import { registerRootUpdates } from './root-updates';
import { RootHost } from './root-host';
import { ThreadConversation } from './thread-conversation';
import { ThreadLoop } from './thread-runtime';
import { ThreadWatch } from './thread-watch';

/** Updates one run handles before it continues as new. */
const maxUpdatesPerRun = 1_500;

/**
 * Hosts one root run (SPEC S3.1): the registry, grant, counters and root mailbox live here and nowhere
 * else, every control operation of the tree is decided here, and the root agent's turns run here.
 * Continues-as-new while the root is idle, before its history grows large (SPEC S7.3).
 */
export async function rootRunWorkflow(rawInput: RootRunInputShape): Promise<RootRunResult> {
  let input: RootRunInput;
  let resume: RootResume | undefined;
  try {
    input = parseInput(RootRunInput, rawInput, 'root run input');
    resume = input.resume === undefined ? undefined : parseInput(RootResume, input.resume, 'resume');
  } catch (error) {
    throw asFailure(error);
  }
  const state = resume
    ? new RootRunState(resume.run)
    : RootRunState.create({
        grant: input.grant,
        name: input.spec.name,
        task: input.spec.task,
        tools: input.spec.tools ?? [allTools],
        taskQueue: workflowInfo().taskQueue,
        now: new Date().toISOString(),
      });
  const rootScope: ControlScope = { rootId: state.rootId, threadId: state.rootId };
  const watch = new ThreadWatch(resume?.watch);
  let ending: 'completed' | 'cancelled' | undefined;
  const host: RootHost = new RootHost(
    state,
    {
      onMessage: (message) => {
        if (message.triggerTurn) loop.requestTurn();
      },
      interrupt: () => loop.interrupt(),
      stop: () => loop.stop(),
      currentTurn: () => loop.state.turn,
    },
    { shutdownGraceMs: input.shutdownGraceMs, continueAsNewAfterEvents: input.continueAsNewAfterEvents },
    resume,
  );
  let upsertedStatus: string | undefined;
  const showStatus = () => {
    const { live, total } = state.counters;
    watch.record(state.root);
    // Upserting only when the status changes saves an action per thread event; runs recorded before
    // this change upserted every time, and replay keeps them on that path (SPEC S7.4).
    if (!patched('root-status-upsert-on-change') || upsertedStatus !== state.root.status) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: state.root.status }]);
      upsertedStatus = state.root.status;
    }
    setCurrentDetails(
      `**${state.root.status}** · turn ${state.root.turnsStarted} · ${live} live / ${total} spawned sub-agents`,
    );
  };
  const conversation = new ThreadConversation(() => state.root, state.grant.interactionTimeoutMs);
  conversation.open(!resume);
  const loop: ThreadLoop = new ThreadLoop(
    () => state.root,
    {
      kernel: kernelFor(input.spec),
      // Each turn's kernel gets controls bound to that turn (SPEC S3.8).
      controls: (turn) => host.rootControls(turn),
      takeInbox: () => state.takeRootMessages(rootScope),
      conversation,
      turnStarted: (turn, at) => {
        state.turnStarted(state.rootId, turn, at);
        showStatus();
      },
      turnEnded: (outcome, nextStatus) => {
        state.turnEnded(state.rootId, outcome, nextStatus);
        showStatus();
      },
    },
    resume?.loop ?? { turn: 0, turnRequested: true, memory: {}, idleSince: null },
  );

  registerRootUpdates(host, state, {
    finish: (status) => {
      ending ??= status;
      return host.shutdown();
    },
  });
  setHandler(loadThreadQuery, (scope, threadId) => answerQuery(() => state.load(scope, threadId)));
  setHandler(listThreadsQuery, (scope) => answerQuery(() => state.list(scope)));
  setHandler(runStateQuery, () => state.snapshot());
  setHandler(threadQuery, () => state.root);
  setHandler(interruptSignal, () => void loop.interrupt());
  setHandler(controlRequestSignal, (raw) => {
    const request = ControlRequest.safeParse(raw);
    // A signal cannot answer a malformed request: there is no valid caller to answer.
    if (request.success) host.accept(request.data);
  });
  setHandler(threadEventSignal, (raw) => {
    const event = ThreadEvent.safeParse(raw);
    if (event.success) host.applyEvent(event.data);
    showStatus();
  });
  watch.register();
  showStatus();

  // Continue-as-new well before Temporal's 2,000 updates per run; runs recorded before this trigger
  // existed replay without it (SPEC S7.4).
  const countsUpdates = patched('continue-as-new-by-update-count');
  const pastHistoryLimit = () =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength >= input.continueAsNewAfterEvents ||
    (countsUpdates && host.updatesThisRun >= maxUpdatesPerRun);
  for (;;) {
    const exit = await loop.run({ idleTimeoutMs: state.grant.idleTimeoutMs, pause: pastHistoryLimit });
    if (exit === 'continue-as-new') {
      host.releasing = true;
      watch.release();
      await host.drain();
      await condition(() => allHandlersFinished() && host.idle && conversation.idle);
      const carried: RootResume = {
        schemaVersion: 1,
        run: state.snapshot(),
        loop: loop.state,
        watch: watch.snapshot(),
        ...host.carried,
      };
      return await continueAsNew<typeof rootRunWorkflow>({ ...input, resume: carried });
    }
    // Idle and alone for the idle timeout, the root completes; with live sub-agents it stays for more turns.
    if (exit === 'stopped' || state.counters.live === 0) break;
  }
  const report = await host.shutdown();
  state.threadEnded(state.rootId, ending ?? 'completed', new Date().toISOString(), true);
  showStatus();
  conversation.publish({
    type: 'status',
    event: 'thread-end',
    threadId: state.rootId,
    detail: state.root.status,
  });
  await host.drain();
  await condition(() => allHandlersFinished() && conversation.idle);
  return { root: state.root, shutdown: report };
}
