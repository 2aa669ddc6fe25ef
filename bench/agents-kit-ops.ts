import { setTimeout as delay } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import { publishNotifications, resolveNotification } from '../client/conversations';
import { ThreadService, type ThreadControls } from '../client/thread-service';
import { newId, relatedId } from '../domain/ids';
import type { AgentThread, NotificationBody, ScriptStepShape } from '../domain/schemas';
import { addCosts, historyCost, perOperation, type HistoryCost } from './actions';
import {
  awaitHistoryTime,
  awaitQuiet,
  awaitSettled,
  costSince,
  firstTaskCompletedMs,
  historyLengths,
} from './histories';
import {
  clientTimed,
  type BenchConfig,
  type OperationBenchmark,
  type TimedOperation,
  type ThroughputWindow,
  nowMs,
} from './measure';
import { costOf, Primitive, type BenchContext } from './primitives';
import { noopTool } from './step-model';
import { attachRoot, replyOnly } from './bench-roots';

/** Spawns an agent and waits until its first turn is over (it is idle). */
async function spawnIdle(controls: ThreadControls, name: string, turns = replyOnly): Promise<AgentThread> {
  const thread = await controls.spawn({ task: `bench ${name}`, name, kernel: { type: 'scripted', turns } });
  await controls.wait({ threadIds: [thread.id], timeoutMs: 30_000 });
  return thread;
}

/** The workflows of a run and its threads: their own and their conversations. */
const treeIds = (threadIds: readonly string[]) =>
  threadIds.flatMap((id) => [id, relatedId('conversation', id)]);

/** spawn → running: done when the new agent's first workflow task (which marks it running) completes. */
export function spawnBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  let count = 0;
  let last: string | undefined;
  const spawnOne = async (): Promise<TimedOperation & { threadId: string }> => {
    const name = `s${count++}`;
    const startMs = nowMs();
    const thread = await service
      .rootControls()
      .spawn({ task: `bench ${name}`, name, kernel: { type: 'scripted', turns: replyOnly } });
    last = thread.id;
    const completedMs = () => awaitHistoryTime(context.client, thread.id, firstTaskCompletedMs);
    return { startMs, completedMs, threadId: thread.id };
  };
  return {
    name: 'spawn → running',
    kind: 'agents-kit',
    primitive: Primitive.childStart,
    observedBy: 'history',
    description:
      'rootControls().spawn(); until the agent’s first workflow task (status running, turn 1 started) completes',
    costNote:
      'everything the spawn causes: the update, the agent and its conversation started, the agent’s one-step first turn and its reports',
    async setup() {
      service = await attachRoot(context, 'spawn');
    },
    operate: () => spawnOne(),
    // The new agent's first turn ends and is reported after it is running.
    settle: () => awaitSettled(context.client, treeIds([service.rootThreadId, ...(last ? [last] : [])])),
    cost: (operations) =>
      costOf(context.client, treeIds([service.rootThreadId]), operations, async () =>
        treeIds([(await spawnOne()).threadId]),
      ),
  };
}

/** sendMessage → delivery: done when the recipient's workflow task that took the message into its mailbox completes. */
export function sendMessageBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  let recipient: AgentThread;
  let count = 0;
  const sendOne = async (): Promise<TimedOperation> => {
    const content = `bench-${count++}`;
    const startMs = nowMs();
    await service.rootControls().sendMessage({ recipient: recipient.id, content, triggerTurn: false });
    // The update returns once the recipient's own workflow has numbered the message into its mailbox.
    const completed = nowMs();
    return { startMs, completedMs: () => Promise.resolve(completed) };
  };
  return {
    name: 'sendMessage → mailbox',
    kind: 'agents-kit',
    primitive: Primitive.update,
    floor: Primitive.update,
    observedBy: 'client',
    description:
      'root sendMessage (triggerTurn false) to an idle agent: one update to the agent’s own workflow (protocol v1)',
    costNote: 'the send-message update on the recipient',
    async setup() {
      service = await attachRoot(context, 'send');
      recipient = await spawnIdle(service.rootControls(), 'recipient');
    },
    operate: () => sendOne(),
    cost: (operations) =>
      costOf(
        context.client,
        treeIds([service.rootThreadId, recipient.id]),
        operations,
        async () => (await sendOne(), []),
      ),
  };
}

/** interrupt → receipt: the root's interrupt update on an idle agent. */
export function interruptBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  let target: AgentThread;
  const interruptOne = () => clientTimed(() => service.rootControls().interrupt(target.id));
  return {
    name: 'interrupt → receipt',
    kind: 'agents-kit',
    primitive: Primitive.update,
    floor: Primitive.relayUpdate,
    observedBy: 'client',
    description: 'rootControls().interrupt() of an idle agent; until the receipt returns',
    costNote: 'the interrupt update on the root and its interrupt signal to the agent',
    async setup() {
      service = await attachRoot(context, 'interrupt');
      target = await spawnIdle(service.rootControls(), 'target');
    },
    operate: () => interruptOne(),
    cost: (operations) =>
      costOf(
        context.client,
        treeIds([service.rootThreadId, target.id]),
        operations,
        async () => (await interruptOne(), []),
      ),
  };
}

/** publish → recv: a receiver waits in recv(); publishNotifications wakes it. */
export function publishRecvBenchmark(context: BenchContext): OperationBenchmark {
  const lanes: { conversationId: string; receiver: ConversationNotificationReceiver }[] = [];
  let settleMs = 0;
  const publishOne = async (index: number, lane: number, settle: boolean): Promise<TimedOperation> => {
    const { conversationId, receiver } = lanes[lane]!;
    const received = receiver.recv();
    if (settle) await delay(settleMs);
    return clientTimed(async () => {
      const text = `bench-${index}`;
      await publishNotifications(context.client, conversationId, [{ body: { type: 'message', text } }], {
        taskQueue: context.taskQueue,
      });
      const notification = await received;
      if (notification?.body.type !== 'message' || notification.body.text !== text)
        throw new Error(`receiver got ${JSON.stringify(notification)} instead of ${text}`);
    });
  };
  return {
    name: 'publish → recv',
    kind: 'agents-kit',
    primitive: Primitive.longPoll,
    observedBy: 'client',
    description: 'a receiver waits in recv() (given settleMs); publishNotifications(); until recv() resolves',
    costNote: 'the publish signal, the receive long-poll update (which also acknowledges the previous item)',
    async setup(config: BenchConfig) {
      settleMs = config.settleMs;
      for (let lane = 0; lane < config.concurrency; lane++) {
        const conversationId = relatedId('conversation', newId('thread', randomUUID));
        const receiver = await ConversationNotificationReceiver.open(context.client, conversationId, {
          taskQueue: context.taskQueue,
        });
        context.cleanup.push(() => receiver.dispose());
        lanes.push({ conversationId, receiver });
      }
    },
    operate: (index, lane, phase) => publishOne(index, lane, phase === 'latency'),
    cost: (operations) =>
      costOf(context.client, [lanes[0]!.conversationId], operations, async (index) => {
        await (await publishOne(1_000_000 + index, 0, true)).completedMs();
        return [];
      }),
  };
}

/** An agent that asks a question every turn, and a receiver on its conversation. */
interface AskingAgent {
  thread: AgentThread;
  receiver: ConversationNotificationReceiver;
  turns: number;
}

/**
 * Each turn asks, then runs a tool with the answer: what an agent does once a person answers (its next
 * step is an activity, a tool or a model call). The woken task schedules that activity; the turn's
 * reply and end follow in later tasks, as they would after a real tool.
 */
const askEveryTurn: ScriptStepShape[][] = [
  [
    { type: 'ask', kind: 'question', prompt: 'bench question' },
    { type: 'tool', tool: noopTool.name, input: {} },
    { type: 'reply', text: '{{last}}' },
  ],
];

/** resolve → agent wakes: done when the agent's workflow task that took the answer completes. */
export function resolveBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  const agents: AskingAgent[] = [];
  /** The agent's next open question (a new turn is triggered for every question after the first). */
  const nextQuestion = async (agent: AskingAgent): Promise<NotificationBody> => {
    if (agent.turns++ > 0)
      await service
        .rootControls()
        .sendMessage({ recipient: agent.thread.id, content: 'again', triggerTurn: true });
    for (;;) {
      const notification = await agent.receiver.recv();
      if (!notification) throw new Error(`the conversation of ${agent.thread.id} ended`);
      if (notification.body.type === 'interaction') return notification.body;
    }
  };
  const settleAsker = (agent: AskingAgent) =>
    awaitSettled(context.client, treeIds([service.rootThreadId, agent.thread.id]));
  const resolveOne = async (
    agent: AskingAgent,
    body: NotificationBody,
    index: number,
  ): Promise<TimedOperation> => {
    if (body.type !== 'interaction') throw new Error('not an interaction');
    const startMs = nowMs();
    await resolveNotification(
      context.client,
      { body },
      { type: 'question', text: `answer-${index}` },
      { capability: service.rootCapability },
    );
    // The update returns once the agent that asked has taken the answer (protocol v1).
    const completed = nowMs();
    return { startMs, completedMs: () => Promise.resolve(completed) };
  };
  return {
    name: 'resolve → agent wakes',
    kind: 'agents-kit',
    primitive: Primitive.update,
    floor: Primitive.update,
    observedBy: 'client',
    description:
      'resolveNotification() of an agent’s question; until the agent’s task that took the answer completes',
    costNote:
      'the resolve update to the agent that asked, its settle signal to its conversation, which settles the root’s mirror (S5.9), and the rest of the woken turn (the tool it runs with the answer, its reply, the turn-end reports)',
    async setup(config: BenchConfig) {
      service = await attachRoot(context, 'resolve');
      for (let lane = 0; lane < config.concurrency; lane++) {
        const thread = await service.rootControls().spawn({
          task: 'bench asks',
          name: `asker${lane}`,
          kernel: { type: 'scripted', turns: askEveryTurn },
        });
        // Let the agent start its own conversation (as its child) before a receiver would start it.
        const conversationId = relatedId('conversation', thread.id);
        await awaitHistoryTime(context.client, conversationId, firstTaskCompletedMs);
        const receiver = await ConversationNotificationReceiver.open(
          context.client,
          relatedId('conversation', thread.id),
          { taskQueue: context.taskQueue, capability: service.rootCapability },
        );
        context.cleanup.push(() => receiver.dispose());
        agents.push({ thread, receiver, turns: 0 });
      }
    },
    operate: async (index, lane, phase) => {
      const agent = agents[lane]!;
      const question = await nextQuestion(agent);
      // The question is raised before its mirror at the root and the turn's reports have landed.
      if (phase === 'latency') await settleAsker(agent);
      return resolveOne(agent, question, index);
    },
    // The woken turn runs its tool, replies and ends after the answer is taken.
    settle: () => settleAsker(agents[0]!),
    async throughputWindows(total, concurrency): Promise<ThroughputWindow[]> {
      const windows: ThroughputWindow[] = [];
      for (let done = 0; done < total;) {
        const round = agents.slice(0, Math.min(concurrency, total - done));
        const questions = await Promise.all(round.map((agent) => nextQuestion(agent)));
        const startMs = nowMs();
        const operations = await Promise.all(
          round.map((agent, lane) => resolveOne(agent, questions[lane]!, done + lane)),
        );
        const endMs = Math.max(
          ...(await Promise.all(operations.map((operation) => operation.completedMs()))),
        );
        windows.push({ operations: round.length, startMs, endMs });
        done += round.length;
      }
      return windows;
    },
    async cost(operations): Promise<HistoryCost> {
      const agent = agents[0]!;
      const watched = treeIds([service.rootThreadId, agent.thread.id]);
      let total: HistoryCost = historyCost([]);
      for (let index = 0; index < operations; index++) {
        const question = await nextQuestion(agent);
        await awaitQuiet(context.client, watched);
        const before = await historyLengths(context.client, watched);
        await (await resolveOne(agent, question, index)).completedMs();
        await awaitQuiet(context.client, watched);
        total = addCosts(total, await costSince(context.client, watched, before));
      }
      return perOperation(total, operations);
    },
  };
}
