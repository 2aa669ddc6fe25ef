import type { ThreadService } from '../client/thread-service';
import type { TreeEvent } from '../client/tree-stream';
import { relatedId } from '../domain/ids';
import type { AgentThread } from '../domain/schemas';
import { nowMs, type BenchConfig, type OperationBenchmark, type TimedOperation } from './measure';
import { costOf, Primitive, type BenchContext } from './primitives';
import { deferred, within, type Deferred } from './waiting';
import { attachRoot, replyOnly } from './bench-roots';

// "tree event → tree stream" (issue 18): how long an event of a root run's tree takes to reach a client
// reading the tree stream (SPEC S10.2), against the long-poll wake-up it rides on. The event is a message
// taken into an idle agent's mailbox: one update to the agent's own workflow, and the first event of the
// tree whose moment the client knows exactly (it sends it), so the sample is the message's way into the
// recipient's history plus the stream's history long-poll waking on it.

/** A sample's marker: the content of its message, unique over the run (priming, latency, throughput, cost). */
const markerOf = (index: number) => `tree-${index}`;

/**
 * One `streamTree` loop over a root run, in the background for the whole row, resolving the waiter of
 * each message it sees taken: with `nowMs()` when the stream yields it. One reader per run, as a client
 * watching a tree would hold one, so every lane's events pass through the one ordering loop.
 */
class TreeReader {
  private readonly controller = new AbortController();
  /** Waiters by `recipient|content`: the event a sample waits for is its message in its agent's mailbox. */
  private readonly waiters = new Map<string, Deferred<number>>();
  private failure: Error | undefined;
  readonly done: Promise<void>;

  constructor(service: ThreadService) {
    this.done = (async () => {
      for await (const item of service.streamTree({ signal: this.controller.signal })) this.take(item);
    })().then(
      // The stream ends only once every history of the tree has closed: nothing more would arrive.
      () => this.fail(new Error(`the tree stream of ${service.rootThreadId} ended`)),
      (error: unknown) => this.fail(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** Arms a waiter for `content` in `recipient`'s mailbox; armed before the send, so no event is missed. */
  expect(recipient: string, content: string): Promise<number> {
    const waiter = deferred<number>();
    if (this.failure) waiter.reject(this.failure);
    else this.waiters.set(`${recipient}|${content}`, waiter);
    return waiter.promise;
  }

  stop(): Promise<void> {
    this.controller.abort();
    return this.done;
  }

  private take(item: TreeEvent): void {
    if (item.event.type !== 'message-received') return;
    const key = `${item.threadId}|${item.event.content}`;
    const waiter = this.waiters.get(key);
    if (!waiter) return;
    this.waiters.delete(key);
    waiter.resolve(nowMs());
  }

  private fail(error: Error): void {
    // After `stop` (the run's cleanup) nobody waits any more; otherwise every waiter learns why.
    this.failure = this.controller.signal.aborted ? new Error('the tree reader was stopped') : error;
    for (const waiter of this.waiters.values()) waiter.reject(this.failure);
    this.waiters.clear();
  }
}

/** tree event → tree stream: from a root's sendMessage to the tree stream yielding its receipt. */
export function treeStreamBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  let reader: TreeReader;
  const agents: AgentThread[] = [];
  const sendOne = async (agent: AgentThread, index: number): Promise<TimedOperation> => {
    const marker = markerOf(index);
    const seen = reader.expect(agent.id, marker);
    const startMs = nowMs();
    await service.rootControls().sendMessage({ recipient: agent.id, content: marker, triggerTurn: false });
    // The timer starts when the sample is read: a throughput run reads them after its sends.
    return {
      startMs,
      completedMs: () => within(seen, `the tree stream to yield ${marker} taken by ${agent.id}`),
    };
  };
  return {
    name: 'tree event → tree stream',
    kind: 'agents-kit',
    primitive: Primitive.longPoll,
    observedBy: 'client',
    description:
      'root sendMessage (triggerTurn false) to an idle agent; until a streamTree() reader of the run (one, started before, ' +
      'reading the tree’s histories by long-poll) yields the message-received event. Throughput: messages/s, lanes sending one at a time, ' +
      'each lane to its own agent, all read by the one stream',
    costNote:
      'the send-message update on the recipient, as “sendMessage → mailbox”: reading the stream adds no event or action ' +
      '(history long-polls are reads, not billable)',
    async setup(config: BenchConfig) {
      service = await attachRoot(context, 'tree stream');
      const controls = service.rootControls();
      for (let lane = 0; lane < config.concurrency; lane++) {
        const thread = await controls.spawn({
          task: 'bench tree stream',
          name: `tree${lane}`,
          kernel: { type: 'scripted', turns: replyOnly },
        });
        await controls.wait({ threadIds: [thread.id], timeoutMs: 30_000 });
        agents.push(thread);
      }
      // Started on idle agents: it reads the run from its start, then waits on every history.
      reader = new TreeReader(service);
      context.cleanup.push(() => reader.stop());
      // One message per agent, seen, before any sample: the reader has caught up and follows each
      // agent's own history (read only once its spawn is yielded), so no sample times a catch-up.
      await Promise.all(
        agents.map(async (agent, lane) => (await sendOne(agent, 2_000_000 + lane)).completedMs()),
      );
    },
    operate: (index, lane) => sendOne(agents[lane]!, index),
    cost: (operations) =>
      costOf(
        context.client,
        // The root and the agent, each with its conversation: every workflow the stream reads for it.
        [service.rootThreadId, agents[0]!.id].flatMap((id) => [id, relatedId('conversation', id)]),
        operations,
        // Each message is seen by the stream before the next, so the cost counts a read through.
        async (index) => (await (await sendOne(agents[0]!, 3_000_000 + index)).completedMs(), []),
      ),
  };
}
