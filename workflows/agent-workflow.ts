import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  AgentInput,
  type AgentInterruptReceipt,
  type AgentInputShape,
  CloseThreadRequest,
  ControlRequest,
  ControlResponse,
  fromErrorAnswer,
  type ControlOperationInput,
  type ThreadEvent,
  type WaitResult,
  WaitRequest,
  waitAcrossRuns,
} from '../domain/control';
import { parseInput } from '../domain/errors';
import { Mailbox } from '../domain/mailbox';
import {
  closeThreadSignal,
  controlRequestSignal,
  controlResponseSignal,
  deliverMessageSignal,
  interruptSignal,
  mailboxQuery,
  threadEventSignal,
  threadQuery,
} from '../domain/messages';
import { InterAgentMessage, type AgentThread, type ThreadStatus } from '../domain/schemas';
import { searchAttributes } from '../domain/search-attributes';
import { asFailure } from './failures';
import type { AgentControls } from './kernel';
import { kernelFor } from './kernels';
import { ThreadConversation } from './thread-conversation';
import { ThreadLoop } from './thread-runtime';
import { ThreadWatch } from './thread-watch';

/**
 * One sub-agent (SPEC S4.9): runs its turns, receives its messages in sequence order, and asks its
 * root run for every control operation, so admission and routing stay in one place (SPEC S3.1).
 * Continues-as-new between turns before its history grows large, carrying mailbox, loop and watch state.
 */
export async function agentWorkflow(rawInput: AgentInputShape): Promise<AgentThread> {
  let input: AgentInput;
  try {
    input = parseInput(AgentInput, rawInput, 'agent input');
  } catch (error) {
    throw asFailure(error);
  }
  const resume = input.resume;
  let thread = resume?.thread ?? input.thread;
  const root = getExternalWorkflowHandle(thread.rootId);
  const mailbox = new Mailbox(resume?.mailbox);
  const watch = new ThreadWatch(resume?.watch);
  // Responses are kept only for operations this run is waiting on: anything else is dropped.
  const awaiting = new Set<string>();
  const responses = new Map<string, ControlResponse>();
  const outgoing = new Set<Promise<void>>();
  let operations = resume?.operations ?? 0;

  const send = (work: Promise<void>) => {
    const tracked = work.catch((error: unknown) =>
      log.warn('signal to root run failed', { error: String(error) }),
    );
    outgoing.add(tracked);
    void tracked.finally(() => outgoing.delete(tracked));
  };
  const report = (event: ThreadEvent) => send(root.signal(threadEventSignal, event));
  const setStatus = (status: ThreadStatus, detail: string, changes: Partial<AgentThread> = {}) => {
    thread = { ...thread, ...changes, status, updatedAt: new Date().toISOString() };
    watch.record(thread);
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    setCurrentDetails(`**${status}** · ${thread.path} · ${detail}`);
  };

  const call = async (operation: ControlOperationInput): Promise<unknown> => {
    const operationId = `${thread.id}/${++operations}`;
    const request: ControlRequest = {
      callerId: thread.id,
      operationId,
      operation: operation as ControlRequest['operation'],
    };
    awaiting.add(operationId);
    try {
      await root.signal(controlRequestSignal, request);
      await condition(() => responses.has(operationId));
    } finally {
      awaiting.delete(operationId);
    }
    const response = responses.get(operationId)!;
    responses.delete(operationId);
    if (response.error) throw fromErrorAnswer(response.error);
    return response.result;
  };
  const controls: AgentControls = {
    spawn: async (request) => (await call({ type: 'spawn', request })) as AgentThread,
    spawnRemote: async (request) => (await call({ type: 'spawn-remote', request })) as AgentThread,
    sendMessage: async (request) => (await call({ type: 'send-message', request })) as InterAgentMessage,
    loadThread: async (threadId) => (await call({ type: 'load-thread', threadId })) as AgentThread | null,
    listThreads: async () => (await call({ type: 'list-threads' })) as AgentThread[],
    interrupt: async (threadId) => (await call({ type: 'interrupt', threadId })) as AgentInterruptReceipt,
    close: async (threadId) => (await call({ type: 'close', threadId })) as AgentThread[],
    charge: async (tokens) => (await call({ type: 'charge', tokens })) as { remaining: number },
    wait: (request) =>
      waitAcrossRuns(
        parseInput(WaitRequest, request, 'wait request'),
        async (once) => (await call({ type: 'wait', request: once })) as WaitResult,
      ),
  };

  const conversation = new ThreadConversation(() => thread, input.interactionTimeoutMs);
  conversation.open(!resume);
  const loop = new ThreadLoop(
    () => thread,
    {
      kernel: kernelFor(input.spec),
      controls: () => controls,
      takeInbox: (turn) => mailbox.take(turn),
      conversation,
      turnStarted: (turn, at) => {
        setStatus('running', `turn ${turn}`, { turnsStarted: turn });
        // Every message released so far is taken by this turn right after this report.
        report({
          type: 'turn-start',
          threadId: thread.id,
          turn,
          at,
          consumedThroughSeq: mailbox.releasedThrough,
          consumedThroughBytes: mailbox.releasedBytes,
        });
      },
      turnEnded: (outcome, nextStatus) => {
        setStatus(nextStatus, `turn ${outcome.turn} ${outcome.status}`, {
          turnsCompleted: outcome.turn,
          latestTurn: outcome,
          ...(outcome.turn === 1 ? { firstTurn: outcome } : {}),
        });
        report({ type: 'turn-end', threadId: thread.id, outcome, nextStatus });
      },
    },
    resume?.loop ?? { turn: 0, turnRequested: true, memory: {}, idleSince: null },
  );

  let closedAs: ThreadStatus | undefined;
  setHandler(deliverMessageSignal, (raw) => {
    const parsed = InterAgentMessage.safeParse(raw);
    if (!parsed.success || parsed.data.recipient !== thread.id) {
      log.warn('dropped a malformed delivery', { threadId: thread.id });
      return;
    }
    const released = mailbox.accept(parsed.data, (reason) =>
      log.warn('dropped a delivery outside the mailbox bounds', { threadId: thread.id, reason }),
    );
    if (released.some((message) => message.triggerTurn)) loop.requestTurn();
  });
  // Every signal handler is total (SPEC S3.10): a payload of the wrong shape is logged and dropped.
  setHandler(controlResponseSignal, (raw) => {
    const parsed = ControlResponse.safeParse(raw);
    if (!parsed.success || !awaiting.has(parsed.data.operationId) || responses.has(parsed.data.operationId)) {
      log.warn('dropped a control response nobody waits for', { threadId: thread.id });
      return;
    }
    responses.set(parsed.data.operationId, parsed.data);
  });
  setHandler(interruptSignal, () => void loop.interrupt());
  setHandler(closeThreadSignal, (raw) => {
    if (!CloseThreadRequest.safeParse(raw).success) {
      log.warn('dropped a malformed close-thread signal', { threadId: thread.id });
      return;
    }
    closedAs = 'cancelled';
    loop.stop();
  });
  setHandler(mailboxQuery, () => ({ received: mailbox.view() }));
  setHandler(threadQuery, () => thread);
  watch.register();
  if (!resume) watch.record(thread);

  const pastHistoryLimit = () =>
    workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= input.continueAsNewAfterEvents;
  const exit = await loop.run({ idleTimeoutMs: input.idleTimeoutMs, pause: pastHistoryLimit });
  if (exit === 'continue-as-new') {
    watch.release();
    await condition(() => outgoing.size === 0 && conversation.idle && allHandlersFinished());
    const carried: AgentInput = {
      ...input,
      resume: {
        schemaVersion: 1,
        thread,
        mailbox: mailbox.snapshot(),
        loop: loop.state,
        operations,
        watch: watch.snapshot(),
      },
    };
    return await continueAsNew<typeof agentWorkflow>(carried);
  }
  const status = closedAs ?? 'completed';
  setStatus(status, exit === 'idle-timeout' ? 'idle timeout reached' : 'closed');
  report({ type: 'thread-end', threadId: thread.id, status, at: thread.updatedAt });
  conversation.publish({ type: 'status', event: 'thread-end', threadId: thread.id, detail: status });
  await condition(() => outgoing.size === 0 && conversation.idle && allHandlersFinished());
  return thread;
}
