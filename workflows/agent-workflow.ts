import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  AgentInput,
  type AgentInputShape,
  CloseThreadRequest,
  ownerOf,
  ControlOperation,
  type ControlOperationInput,
  type ThreadEvent,
  type WaitResult,
  WaitRequest,
  waitAcrossRuns,
  type AgentInterruptReceipt,
} from '../domain/control';
import { jsonBytes } from '../domain/bytes';
import { capabilityRefusal, type Capability } from '../domain/capability';
import { carriedThread, restoredThread } from '../domain/carry-bounds';
import { parseInput } from '../domain/errors';
import { AskedTurns } from '../domain/asked-turns';
import { Mailbox } from '../domain/mailbox';
import {
  closeThreadSignal,
  interruptSignal,
  mailboxQuery,
  threadEventSignal,
  threadQuery,
  usageQuery,
  modelTranscriptQuery,
} from '../domain/messages';
import { RecentAnswerLog } from '../domain/recent-answers';
import { type AgentThread, type InterAgentMessage, type ThreadStatus } from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import type { ApprovalPolicy } from '../domain/approval-policy';
import { ApprovalGate, registerPolicyPushes } from './approval-gate';
import { ControlTransport, looksNotFound } from './control-transport';
import { checkRunsAs, startFailure, workflowInput } from './workflow-input';
import type { AgentControls } from './kernel';
import { kernelFor, usesModelKernel } from './kernels';
import { registerProofChecks, ThreadAuthority } from './thread-authority';
import { ThreadConversation } from './thread-conversation';
import { ThreadOperations } from './thread-operations';
import { ThreadLoop } from './thread-runtime';
import { RunLifetime } from './run-lifetime';
import { ThreadWatch } from './thread-watch';
import { allowanceHolder, microUsdUnit, TokenAllowance } from './token-allowance';
import { callBudget } from './call-budget';
import { CancelRequest } from './cancel-request';
import { patches } from './patches';
import { ThreadUsage } from '../domain/usage';
import { TaskBudget } from './task-budget';
import { continuingAsNew, signalDropped } from './workflow-metrics';

/**
 * One sub-agent (SPEC S4.9): runs its turns and owns its mailbox, its running turn and its pending
 * interactions, so sendMessage, interrupt and resolve come straight here and are checked here; every
 * other operation goes straight to the root run (SPEC S3.1). Each request and report carries this
 * thread's capability (SPEC S3.9). Continues-as-new between turns before its history grows large.
 */
export async function agentWorkflow(rawInput: AgentInputShape): Promise<AgentThread> {
  let input: AgentInput;
  try {
    input = workflowInput(AgentInput, rawInput, 'agent input');
    checkRunsAs(input.thread.id, 'the agent of thread');
  } catch (error) {
    throw startFailure(error);
  }
  const resume = input.resume;
  // A carried record leaves its task to the spec (SPEC S3.10: one copy of each text in the input).
  let thread = resume ? restoredThread(input.thread, input.spec.task) : input.thread;
  const authority = new ThreadAuthority(input.runKey, thread.rootId, input.lineage, thread.id);
  const root = getExternalWorkflowHandle(thread.rootId);
  const mailbox = new Mailbox(resume?.mailbox);
  // What one task of this workflow may send (SPEC S3.10): the watch's answers and the conversation's batches.
  const budget = new TaskBudget();
  const watch = new ThreadWatch(resume?.watch, budget);
  const recent = new RecentAnswerLog(resume?.recent);
  const transport = new ControlTransport(() => authority.self, input.runKey, resume?.operations ?? 0, budget);
  const outgoing = new Set<Promise<void>>();
  const lifetime = new RunLifetime(input.continueAsNewAfterEvents);
  const usesModel = usesModelKernel(input.spec);

  const track = (work: Promise<void>) => {
    const tracked = work.catch((error: unknown) => log.warn('signal failed', { error: String(error) }));
    outgoing.add(tracked);
    void tracked.finally(() => outgoing.delete(tracked));
  };
  // Reports go in order; one past the task's budget (a turn's result may be 256 KiB) waits for a later
  // task, and those after it wait behind it.
  let reportsWaiting: Promise<void> | undefined;
  // A report the root cannot take because its workflow is gone (below: `rootGone`).
  let rootGone = (): void => undefined;
  const toRoot = (payload: { from: Capability; event: ThreadEvent }) =>
    root.signal(threadEventSignal, payload).catch((error: unknown) => {
      if (looksNotFound(error)) rootGone();
      throw error;
    });
  const report = (event: ThreadEvent) => {
    const payload = { from: authority.self, event };
    const bytes = jsonBytes(payload);
    const later = reportsWaiting ? reportsWaiting.then(() => budget.take(bytes)) : budget.take(bytes);
    if (!later) return track(toRoot(payload));
    const sent = later.then(() => toRoot(payload));
    track(sent);
    const waiting = (reportsWaiting = sent.then(
      () => undefined,
      () => undefined,
    ));
    void waiting.then(() => {
      if (reportsWaiting === waiting) reportsWaiting = undefined;
    });
  };
  // The status search attribute as the server has it (given at start, kept through continue-as-new):
  // an upsert is a billable action, so only a change is upserted (back-to-back turns stay `running`).
  let upsertedStatus =
    (workflowInfo().typedSearchAttributes.get(searchAttributes.status) as ThreadStatus | undefined) ??
    thread.status;
  const usage = new ThreadUsage(resume?.usage);
  const setStatus = (status: ThreadStatus, detail: string, changes: Partial<AgentThread> = {}) => {
    thread = { ...thread, ...changes, status, updatedAt: new Date().toISOString() };
    watch.record(thread);
    if (status !== upsertedStatus) {
      upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
      upsertedStatus = status;
    }
    setCurrentDetails(`**${status}** · ${thread.path} · ${detail}${usage.detail}`);
  };

  const allowance = new TokenAllowance(
    async (request) =>
      (await call({ type: 'reserve', ...request })) as { granted: number; remaining: number },
    resume?.tokens ?? { allowance: input.allowance ?? 0, owed: 0, unreported: 0 },
    track,
    {
      givesBack: () => patched(patches.refusedCallGivesBack),
      callSized: input.callSizedAllowance === true,
    },
  );
  // SPEC S11.3: under a budget in dollars, a second allowance in micro-dollars, kept the same way.
  const costAllowance = input.dollarBudget
    ? new TokenAllowance(
        async (request) =>
          (await call({ type: 'reserve', ...request, unit: 'microUsd' })) as {
            granted: number;
            remaining: number;
          },
        resume?.cost ?? { allowance: input.costAllowance ?? 0, owed: 0, unreported: 0 },
        track,
        { unit: microUsdUnit, givesBack: () => true, callSized: input.callSizedAllowance === true },
      )
    : undefined;
  /** SPEC S5.1: a "child spawned" status in this thread's conversation. */
  const spawned = (child: AgentThread): AgentThread => {
    conversation.publish({ type: 'status', event: 'child-spawned', threadId: child.id, detail: child.path });
    return child;
  };
  /** Sends an operation straight to its owner (SPEC S3.1). */
  const call = (operation: ControlOperationInput) =>
    transport.call(
      ownerOf(parseInput(ControlOperation, operation, 'control operation'), thread.rootId),
      operation,
    );
  const askedTurns = new AskedTurns();
  const controls: AgentControls = {
    spawn: async (request) => spawned((await call({ type: 'spawn', request })) as AgentThread),
    spawnRemote: async (request) => spawned((await call({ type: 'spawn-remote', request })) as AgentThread),
    sendMessage: async (request) => {
      const sent = (await call({ type: 'send-message', request })) as Omit<InterAgentMessage, 'content'>;
      askedTurns.note(sent.recipient, sent);
      // The recipient answers without the content, which the sender has.
      return { ...sent, content: request.content };
    },
    loadThread: async (threadId) => (await call({ type: 'load-thread', threadId })) as AgentThread | null,
    listThreads: async () => (await call({ type: 'list-threads' })) as AgentThread[],
    interrupt: async (threadId) => (await call({ type: 'interrupt', threadId })) as AgentInterruptReceipt,
    close: async (threadId) => (await call({ type: 'close', threadId })) as AgentThread[],
    // Spent from the thread's allowance: no round trip to the root per model call (SPEC S6.4).
    charge: (tokens) => allowance.charge(tokens),
    chargeReported: (tokens) => allowance.chargeReported(tokens),
    ...(input.usageLedger
      ? { calls: callBudget(allowanceHolder(allowance), costAllowance && allowanceHolder(costAllowance)) }
      : {}),
    // SPEC S4.7: a thread this one triggered counts once that turn ended. No patch: the root's answer
    // is in this workflow's history, which replays it whatever the request said.
    wait: (request) =>
      askedTurns.wait(parseInput(WaitRequest, request, 'wait request'), (filled) =>
        waitAcrossRuns(filled, async (once) => (await call({ type: 'wait', request: once })) as WaitResult),
      ),
  };

  const conversation = new ThreadConversation(
    () => thread,
    { interactionTimeoutMs: input.interactionTimeoutMs, retentionMs: input.conversationRetentionMs },
    authority,
    resume?.resolutions,
    budget,
  );
  conversation.open(!resume);
  // SPEC S11.4: the one approval gate of this thread's tool calls, in trees with an approval policy.
  const gate =
    input.approvalPolicy &&
    new ApprovalGate(input.approvalPolicy, {
      thread: () => thread,
      conversation,
      remember: async (tool, by) => (await call({ type: 'remember-approval', tool, by })) as ApprovalPolicy,
    });
  registerPolicyPushes(gate, authority);
  const kernel = kernelFor(input.spec, { transcriptDelta: input.transcriptDelta === true });
  const loop = new ThreadLoop(
    () => thread,
    {
      kernel,
      controls: () => controls,
      takeInbox: (turn) => mailbox.take(turn),
      conversation,
      recordUsage: (model, used) => usage.record(model, used),
      countsTurnTokens: input.turnTokens === true,
      ...(gate ? { approval: gate } : {}),
      turnStarted: (turn, at) => {
        setStatus('running', `turn ${turn}`, { turnsStarted: turn });
        // The root counted the first turn as started when it started this workflow (a signal saved).
        if (turn > 1) report({ type: 'turn-start', threadId: thread.id, turn, at });
        // Only the model kernel spends tokens as it goes: a scripted reply's are asked for when reached.
        if (usesModel) allowance.prefetch();
        if (usesModel) costAllowance?.prefetch();
      },
      turnEnded: (outcome, nextStatus) => {
        setStatus(nextStatus, `turn ${outcome.turn} ${outcome.status}`, {
          turnsCompleted: outcome.turn,
          latestTurn: outcome,
          ...(outcome.turn === 1 ? { firstTurn: outcome } : {}),
        });
        const spentTokens = allowance.takeUnreported();
        const spentMicroUsd = costAllowance?.takeUnreported() ?? 0;
        const used = usage.takeUnreported();
        report({
          type: 'turn-end',
          threadId: thread.id,
          outcome,
          nextStatus,
          ...(spentTokens > 0 ? { spentTokens } : {}),
          ...(spentMicroUsd > 0 ? { spentMicroUsd } : {}),
          ...(used ? { usage: used } : {}),
        });
      },
    },
    resume?.loop ?? { turn: 0, turnRequested: true, memory: {}, idleSince: null },
  );

  let closedAs: ThreadStatus | undefined;
  let ending = false;
  // SPEC S4.4: a root run terminated from outside closed nobody, so its threads end as its close would
  // end them, at their next report to it (a turn's start, end, or a spawn's), which the server answers
  // with "not found". An idle thread learns it at its next turn, or ends at its idle timeout.
  rootGone = () => {
    if (ending || loop.stopping || !patched(patches.rootGoneEndsThread)) return;
    log.warn('the root run is gone: this thread ends as its close would end it', { threadId: thread.id });
    closedAs = 'cancelled';
    loop.stop();
  };
  transport.register();
  const operations = new ThreadOperations(
    authority,
    transport,
    {
      thread: () => thread,
      mailbox,
      closing: () => loop.stopping,
      requestTurn: () => loop.requestTurn(),
      interrupt: () => loop.interrupt(),
      interactions: conversation.interactions,
    },
    recent,
    lifetime,
  );
  operations.registerUpdates();
  operations.registerRequests(track);
  setHandler(interruptSignal, () => void loop.interrupt());
  // Every signal handler is total (SPEC S3.10): only the root run, proven, closes a thread.
  setHandler(closeThreadSignal, (raw) => {
    const parsed = CloseThreadRequest.safeParse(raw);
    if (
      !parsed.success ||
      parsed.data.from.threadId !== thread.rootId ||
      capabilityRefusal(input.runKey, thread.rootId, parsed.data.from) !== undefined
    ) {
      signalDropped(
        closeThreadSignal.name,
        parsed.success ? 'unproven' : 'malformed',
        'dropped a close-thread signal that is not from the root run',
        { threadId: thread.id },
      );
      return;
    }
    closedAs = 'cancelled';
    loop.stop();
  });
  setHandler(mailboxQuery, () => ({ received: mailbox.view() }));
  setHandler(threadQuery, () => thread);
  registerProofChecks(authority);
  setHandler(usageQuery, () => ({ threadId: thread.id, ledger: usage.ledger }));
  setHandler(modelTranscriptQuery, (key) => kernel.transcript?.(key) ?? null);
  watch.register(authority);
  if (!resume) watch.record(thread);

  const cancel = new CancelRequest();
  const exit = await cancel.stopOn(
    () => loop.run({ idleTimeoutMs: input.idleTimeoutMs, pause: () => lifetime.due }),
    () => ((closedAs = 'cancelled'), 'stopped' as const),
  );
  let released =
    exit === 'continue-as-new' &&
    (await cancel.stopOn(
      async () => {
        await lifetime.ripen();
        lifetime.releasing = true;
        watch.release();
        await condition(() => outgoing.size === 0 && conversation.idle && allHandlersFinished());
        return true;
      },
      // Cancelled while releasing: the thread stays and ends as a close ends it.
      () => {
        closedAs = 'cancelled';
        lifetime.stay();
        watch.stay();
        return false;
      },
      'release',
    ));
  // Closed while releasing (a close signal is not refused): the thread stays and ends here.
  if (released && loop.stopping && patched(patches.stopWhileContinuing)) {
    lifetime.stay();
    watch.stay();
    released = false;
  }
  if (released) {
    const carried: AgentInput = {
      ...input,
      ...(gate ? { approvalPolicy: gate.policy } : {}),
      thread: carriedThread(thread),
      resume: {
        schemaVersion: 1,
        mailbox: mailbox.snapshot(),
        loop: loop.state,
        operations: transport.operations,
        watch: watch.snapshot(),
        recent: recent.snapshot(),
        tokens: { ...allowance.state },
        ...(costAllowance ? { cost: { ...costAllowance.state } } : {}),
        resolutions: conversation.interactions.snapshot(),
        ...(usage.carried ? { usage: usage.carried } : {}),
      },
    };
    continuingAsNew();
    return await continueAsNew<typeof agentWorkflow>(carried);
  }
  return await cancel.end(async () => {
    ending = true;
    const status = closedAs ?? 'completed';
    setStatus(status, exit === 'idle-timeout' ? 'idle timeout reached' : 'closed');
    // Whatever a background refill still brings in is given back too.
    await condition(() => outgoing.size === 0);
    report({
      type: 'thread-end',
      threadId: thread.id,
      status,
      at: thread.updatedAt,
      ...(allowance.unused > 0 ? { unusedTokens: allowance.unused } : {}),
      ...(costAllowance && costAllowance.unused > 0 ? { unusedMicroUsd: costAllowance.unused } : {}),
    });
    conversation.publish({ type: 'status', event: 'thread-end', threadId: thread.id, detail: status });
    await condition(() => outgoing.size === 0 && conversation.idle && allHandlersFinished());
    return thread;
  });
}
