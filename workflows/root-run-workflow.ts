import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { attachRefusal } from '../domain/attach-rules';
import { capabilityRefusal, rootCapability } from '../domain/capability';
import { answerQuery, ControlRequest, ThreadReport, type RootRunResult } from '../domain/control';
import { ErrorKind, KitError } from '../domain/errors';
import {
  controlRequestSignal,
  interruptSignal,
  listThreadsQuery,
  loadThreadQuery,
  mailboxQuery,
  approvalPolicyQuery,
  runCountsQuery,
  runStateQuery,
  threadEventSignal,
  threadQuery,
  usageQuery,
  modelTranscriptQuery,
} from '../domain/messages';
import { RootResume, RootRunState } from '../domain/run-state';
import {
  allTools,
  isTerminal,
  RootRunInput,
  type ControlScope,
  type RootRunInputShape,
} from '../domain/schemas';
import { ApprovalGate } from './approval-gate';
import { policyOrRefusal, TreeApprovalPolicy } from './tree-approval-policy';
import { usageLine } from '../domain/usage';
import { searchAttributes } from '../domain/search-attributes';
import { startFailure, workflowInput } from './workflow-input';
import { kernelFor } from './kernels';
import { registerRootUpdates } from './root-updates';
import { RootHost } from './root-host';
import { registerProofChecks, ThreadAuthority } from './thread-authority';
import { ThreadConversation } from './thread-conversation';
import { ThreadLoop } from './thread-runtime';
import { ThreadOperations } from './thread-operations';
import { ThreadWatch } from './thread-watch';
import { TaskBudget } from './task-budget';
import { PollSlots } from './poll-slots';
import { CancelRequest } from './cancel-request';
import { patches } from './patches';
import { fittedAnswer, fittedThreads } from '../domain/answer-bounds';
import { continuingAsNew, signalDropped } from './workflow-metrics';
import { workflowOnlyOperation } from '../domain/operations';

/**
 * Hosts one root run (SPEC S3.1): the registry, grant, counters, budget and root mailbox live here and
 * nowhere else, so spawn, close, shutdown, wait and charge are decided here; the root agent's turns run
 * here. Every caller is proven by its capability (SPEC S3.9).
 * Continues-as-new while the root is idle, before its history grows large (SPEC S7.3).
 */
export async function rootRunWorkflow(rawInput: RootRunInputShape): Promise<RootRunResult> {
  let input: RootRunInput;
  let resume: RootResume | undefined;
  try {
    input = workflowInput(RootRunInput, rawInput, 'root run input');
    resume = input.resume === undefined ? undefined : workflowInput(RootResume, input.resume, 'resume');
    // SPEC S3.2: the rules of a new root hold for every caller, not only for the client library.
    const refusal = resume
      ? undefined
      : attachRefusal(input.rootThreadId, input.grant, workflowInfo().workflowId);
    if (refusal) throw refusal;
  } catch (error) {
    throw startFailure(error);
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
  // One budget for the answers of the run's updates, the watch's and the host's, and one set of
  // long-poll slots for the watch's polls and clients' waits (SPEC S3.10).
  const answers = new TaskBudget();
  const slots = new PollSlots();
  const watch = new ThreadWatch(resume?.watch, answers, slots);
  let ending: 'completed' | 'cancelled' | undefined;
  // A turn's outcome counts its model calls' tokens (runs attached with the flag; see patches.ts).
  const turnTokens = input.turnTokens === true;
  // SPEC S11.4: the tree's approval policy, in runs attached with one (its root's own gate below).
  const policy: TreeApprovalPolicy | undefined = input.approvalPolicy
    ? new TreeApprovalPolicy(input.approvalPolicy, {
        runKey: input.runKey,
        self: rootCapability(input.runKey, state.rootId),
        rootGate: () => gate,
        liveThreads: () =>
          state
            .threads()
            .flatMap((thread) =>
              thread.id === state.rootId || isTerminal(thread.status) ? [] : [thread.id],
            ),
        signalThread: (threadId, signal) => host.signalThread(threadId, signal),
        budget: answers,
      })
    : undefined;
  const cancel = new CancelRequest();
  const host: RootHost = new RootHost(
    state,
    {
      interrupt: () => loop.interrupt(),
      shield: (work) => cancel.shield(work),
      stop: () => loop.stop(),
      currentTurn: () => loop.state.turn,
      spawned: (thread) =>
        conversation.publish({
          type: 'status',
          event: 'child-spawned',
          threadId: thread.id,
          detail: thread.path,
        }),
    },
    {
      shutdownGraceMs: input.shutdownGraceMs,
      continueAsNewAfterEvents: input.continueAsNewAfterEvents,
      runKey: input.runKey,
      operations: resume?.operations ?? 0,
      answers,
      usageLedger: input.usageLedger === true,
      callSizedAllowance: input.callSizedAllowance === true,
      transcriptDelta: input.transcriptDelta === true,
      turnTokens,
      approvalPolicy: policy,
    },
    resume,
  );
  let upsertedStatus: string | undefined;
  const showStatus = () => {
    const { live, total } = state.counters;
    watch.record(state.root);
    // Upserting only when the status changes saves an action per thread event.
    if (upsertedStatus !== state.root.status) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: state.root.status }]);
      upsertedStatus = state.root.status;
    }
    const usage = Object.keys(state.usage.tree).length > 0 ? ` · tree: ${usageLine(state.usage.tree)}` : '';
    setCurrentDetails(
      `**${state.root.status}** · turn ${state.root.turnsStarted} · ${live} live / ${total} spawned sub-agents${usage}`,
    );
  };
  const authority = new ThreadAuthority(input.runKey, state.rootId, [], state.rootId);
  const conversation = new ThreadConversation(
    () => state.root,
    {
      interactionTimeoutMs: state.grant.interactionTimeoutMs,
      retentionMs: state.grant.conversationRetentionMs,
    },
    authority,
    resume?.resolutions,
    answers,
  );
  conversation.open(!resume);
  const gate: ApprovalGate | undefined =
    policy &&
    new ApprovalGate(policy.policy, {
      thread: () => state.root,
      conversation,
      remember: async (tool, by) => policy.remember(tool, by),
    });
  const kernel = kernelFor(input.spec, { transcriptDelta: input.transcriptDelta === true });
  const loop: ThreadLoop = new ThreadLoop(
    () => state.root,
    {
      kernel,
      // Each turn's kernel gets controls bound to that turn (SPEC S3.8).
      controls: (turn) => host.rootControls(turn),
      takeInbox: () => state.takeRootMessages(rootScope),
      conversation,
      recordUsage: (model, usage) => state.recordRootUsage(model, usage),
      countsTurnTokens: turnTokens,
      ...(gate ? { approval: gate } : {}),
      turnStarted: (turn, at) => {
        state.turnStarted(state.rootId, turn, at);
        showStatus();
      },
      turnEnded: (outcome, nextStatus) => {
        state.turnEnded(state.rootId, outcome, nextStatus, turnTokens);
        showStatus();
      },
    },
    resume?.loop ?? { turn: 0, turnRequested: true, memory: {}, idleSince: null },
  );

  registerRootUpdates(
    host,
    state,
    authority,
    policy,
    {
      finish: (status) => {
        ending ??= status;
        return host.shutdown();
      },
    },
    slots,
  );
  // Queries answer only a proven caller (SPEC S3.9); their answers carry any KitError as a value.
  const scopeOf = (capability: unknown) => {
    const caller = authority.caller(capability);
    return { rootId: caller.rootId, threadId: caller.threadId };
  };
  setHandler(loadThreadQuery, (capability, threadId) =>
    answerQuery(() => fittedAnswer('load-thread', state.load(scopeOf(capability), threadId))),
  );
  setHandler(listThreadsQuery, (capability) =>
    answerQuery(() => fittedThreads(state.list(scopeOf(capability)))),
  );
  setHandler(runStateQuery, (capability) =>
    answerQuery(() => {
      if (scopeOf(capability).threadId !== state.rootId)
        throw new KitError(ErrorKind.PermissionDenied, 'only the root capability may read the run state');
      return state.snapshot();
    }),
  );
  setHandler(runCountsQuery, () => ({
    threads: state.threads().length,
    admissionOpen: state.isAdmissionOpen,
  }));
  setHandler(threadQuery, () => state.root);
  setHandler(modelTranscriptQuery, (key) => kernel.transcript?.(key) ?? null);
  registerProofChecks(authority);
  setHandler(approvalPolicyQuery, (capability) =>
    answerQuery(() => (scopeOf(capability), policyOrRefusal(policy).policy)),
  );
  setHandler(usageQuery, () => ({
    threadId: state.rootId,
    ledger: state.usage.root,
    tree: state.usage.tree,
  }));
  setHandler(mailboxQuery, () => ({ received: state.rootMailbox.view() }));
  // The root is a thread like any other (SPEC S3.1): its mailbox, its turn and its interactions take
  // client updates through the same operations as every thread's workflow; the registry also knows
  // whether the sender may send.
  const rootOperations = new ThreadOperations(
    authority,
    host.transport,
    {
      thread: () => state.root,
      mailbox: state.rootMailbox,
      closing: () => loop.stopping,
      requestTurn: () => loop.requestTurn(),
      interrupt: () => loop.interrupt(),
      interactions: conversation.interactions,
      checkSender: (caller, request) =>
        state.checkMessage({ rootId: caller.rootId, threadId: caller.threadId }, request),
    },
    host.recent,
    host.lifetime,
  );
  rootOperations.registerUpdates();
  // Its requests from the tree too: a thread's request that names the root thread goes the same way.
  host.bindRootThread(rootOperations);
  setHandler(interruptSignal, () => void loop.interrupt());
  host.transport.register();
  // Signals from the tree are taken only with a valid proof of the sender (SPEC S3.9); a signal cannot
  // answer a malformed or forged request: there is no proven caller to answer. What a thread's workflow
  // says of itself (its budget, its turns) takes its workflow's own capability, not a delegated one.
  const proven = (from: unknown, workflowOnly = false) =>
    capabilityRefusal(input.runKey, state.rootId, from, workflowOnly) === undefined;
  setHandler(controlRequestSignal, (raw) => {
    const request = ControlRequest.safeParse(raw);
    if (request.success && proven(request.data.from, workflowOnlyOperation(request.data.operation.type)))
      host.accept(request.data);
    else
      signalDropped(
        controlRequestSignal.name,
        request.success ? 'unproven' : 'malformed',
        'dropped a control request without a valid proof',
        { rootId: state.rootId },
      );
  });
  setHandler(threadEventSignal, (raw) => {
    const report = ThreadReport.safeParse(raw);
    const valid =
      report.success &&
      proven(report.data.from, true) &&
      report.data.from.threadId === report.data.event.threadId;
    if (!valid) {
      signalDropped(
        threadEventSignal.name,
        report.success ? 'unproven' : 'malformed',
        'dropped a thread event without a valid proof of its thread',
        { rootId: state.rootId },
      );
      return;
    }
    const event = report.data.event;
    const wasLive = !isTerminal(state.record(event.threadId)?.thread.status ?? 'completed');
    state.applyEvent(event, turnTokens);
    // SPEC S4.8: ended cancelled while still live here (Temporal's cancel request, not a close of ours),
    // it takes its live subtree with it, as a close does.
    const orphans = event.type === 'thread-end' && event.status === 'cancelled' && wasLive;
    if (orphans && state.liveBelow(event.threadId).length > 0 && patched(patches.cancelClosesSubtree))
      host.stopThreads(state.closeBelow(event.threadId, new Date().toISOString()));
    showStatus();
  });
  watch.register(authority);
  showStatus();
  // SPEC S4.4: threads of earlier runs that ended from outside are found within the check's period.
  const checkEvery = input.outsideEndsCheckMs;
  const over = () => host.lifetime.releasing || !state.isAdmissionOpen;
  if (checkEvery) host.track(CancellationScope.nonCancellable(() => host.outside.watch(checkEvery, over)));

  const pastHistoryLimit = () => host.lifetime.due;
  for (;;) {
    const exit = await cancel.stopOn(
      () => loop.run({ idleTimeoutMs: state.grant.idleTimeoutMs, pause: pastHistoryLimit }),
      () => ((ending ??= 'cancelled'), 'stopped' as const),
    );
    if (exit === 'continue-as-new') {
      const released = await cancel.stopOn(
        async () => {
          await host.lifetime.ripen();
          host.lifetime.releasing = true;
          watch.release();
          await host.drain();
          await condition(() => allHandlersFinished() && host.idle && conversation.idle);
          return 'released' as const;
        },
        () => ((ending ??= 'cancelled'), 'stopped' as const),
        'release',
      );
      // Cancelled, shut down or completed while releasing: the run stays and ends here (what it kept is
      // done then).
      if (released === 'stopped' || (loop.stopping && patched(patches.stopWhileContinuing))) {
        watch.stay();
        break;
      }
      const carried: RootResume = {
        schemaVersion: 1,
        run: state.snapshot(),
        loop: loop.state,
        watch: watch.snapshot(),
        resolutions: conversation.interactions.snapshot(),
        ...host.carried,
      };
      continuingAsNew();
      return await continueAsNew<typeof rootRunWorkflow>({
        ...input,
        ...(policy ? { approvalPolicy: policy.policy } : {}),
        resume: carried,
      });
    }
    // Idle and alone for the idle timeout, the root completes; with live sub-agents it stays for more turns.
    if (exit === 'stopped' || state.counters.live === 0) break;
  }
  return await cancel.end(async () => {
    const kept = host.stay();
    const shutdown = host.shutdown();
    // Requests kept for a next run are answered now, once admission has closed.
    for (const request of kept) host.accept(request);
    const report = await shutdown;
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
  });
}
