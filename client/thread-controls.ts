import { checkUpdateBytes } from '../domain/answer-bounds';
import { type WorkflowHandle } from '@temporalio/client';
import { withDeadline } from './deadline';
import { randomUUID } from 'node:crypto';
import {
  unwrapAnswer,
  waitAcrossRuns,
  WaitRequest,
  type AgentInterruptReceipt,
  type ThreadChange,
  type ThreadChanges,
  type WaitRequestInput,
  type WaitResult,
} from '../domain/control';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { newId, parseId, type ThreadId } from '../domain/ids';
import {
  closeThreadUpdate,
  firstTurnUpdate,
  interruptUpdate,
  watchThreadUpdate,
  listThreadsQuery,
  loadThreadQuery,
  sendMessageUpdate,
  spawnRemoteUpdate,
  spawnUpdate,
  takeRootMessagesUpdate,
  waitUpdate,
} from '../domain/messages';
import { AskedTurns } from '../domain/asked-turns';
import { Capability } from '../domain/capability';
import {
  RemoteSpawnRequest,
  SendMessageRequest,
  SpawnRequest,
  type AgentThread,
  type ControlScope,
  type InterAgentMessage,
  type RemoteSpawnRequestInput,
  type SendMessageRequestInput,
  type SpawnRequestInput,
  type TurnOutcome,
  isTerminal,
} from '../domain/schemas';
import type { rootRunWorkflow } from '../workflows/root-run-workflow';
import { readingClientOf } from './cancel';
import { kitCall } from './errors';
import { streamTree, type TreeEvent, type TreeReadOptions } from './tree-stream';
import { executeUpdate, longPoll } from './updates';

/**
 * The control operations of SPEC S4, bound to one caller's capability (SPEC S3.9). Each goes straight
 * to the workflow that owns its state (SPEC S3.1): spawn, wait, close and reads to the root run;
 * sendMessage and interrupt to the thread they name. Every error is a KitError.
 */
export class ThreadControls {
  readonly capability: Capability;
  /** The latest turn a message sent from here asked of each thread, until a wait has seen it end. */
  private readonly askedTurns = new AskedTurns();

  constructor(
    private readonly handle: WorkflowHandle<typeof rootRunWorkflow>,
    capability: Capability,
  ) {
    this.capability = parseInput(Capability, capability, 'capability');
  }

  /**
   * SPEC S10.2: every event of this thread's subtree, in causal order, from the start or after a cursor,
   * readable after the run has ended, as `ThreadService.streamTree` gives the root's holder. This
   * thread's workflow tells which senders in the histories were proven (`check-proofs` queries), as
   * the capability cannot check them itself.
   */
  async *streamTree(options: TreeReadOptions): AsyncGenerator<TreeEvent> {
    objectInput(options, 'streamTree options');
    const rootPath = options.rootPath ?? (await this.loadThread(this.capability.threadId))?.path;
    yield* streamTree(readingClientOf(this.handle.client), this.capability.rootId, {
      ...options,
      ...(rootPath ? { rootPath } : {}),
      capability: this.capability,
    });
  }

  /** Who calls: the capability's root run and thread. */
  get scope(): ControlScope {
    return { rootId: this.capability.rootId, threadId: this.capability.threadId };
  }

  /** The workflow that owns thread `threadId`'s own state: the root run, or the thread's workflow. */
  private ownerOf(threadId: ThreadId): WorkflowHandle {
    return threadId === this.capability.rootId ? this.handle : this.handle.client.getHandle(threadId);
  }

  /**
   * SPEC S4.1. A `requestId` makes it idempotent: the same id returns the same thread. Without one, a
   * fresh id is given to this call, so its retries (also one that lands after the root continued as
   * new, where Temporal no longer recognises the update id) spawn once.
   */
  async spawn(request: SpawnRequestInput): Promise<AgentThread> {
    const parsed = parseInput(SpawnRequest, request, 'spawn request');
    const once = { ...parsed, requestId: parsed.requestId ?? newId('request', randomUUID) };
    checkUpdateBytes(once, 'spawn request');
    return executeUpdate(this.handle, spawnUpdate, [this.capability, once], 'spawn');
  }

  /** SPEC S4.2: spawn onto a remote target registered in the grant (idempotent like {@link spawn}). */
  async spawnRemote(request: RemoteSpawnRequestInput): Promise<AgentThread> {
    const parsed = parseInput(RemoteSpawnRequest, request, 'spawn request');
    const once = { ...parsed, requestId: parsed.requestId ?? newId('request', randomUUID) };
    checkUpdateBytes(once, 'spawn request');
    return executeUpdate(this.handle, spawnRemoteUpdate, [this.capability, once], 'spawnRemote');
  }

  /** SPEC S4.3: send a message; it is delivered exactly once, in per-recipient sequence order. */
  async sendMessage(request: SendMessageRequestInput): Promise<InterAgentMessage> {
    const parsed = parseInput(SendMessageRequest, request, 'message');
    // One update to the recipient's own workflow, which numbers its mailbox (SPEC S3.1).
    const receipt = await outsideTheRun(
      executeUpdate(
        this.ownerOf(parsed.recipient),
        sendMessageUpdate,
        [this.capability, parsed],
        'sendMessage',
      ),
      parsed.recipient,
    );
    this.askedTurns.note(parsed.recipient, receipt);
    // The recipient answers without the content, which the sender has (SPEC S3.10).
    return { ...receipt, content: parsed.content };
  }

  /** SPEC S4.4: the thread, or null when it is not in the caller's subtree. */
  async loadThread(threadId: string): Promise<AgentThread | null> {
    const id = parseId('thread', threadId, 'threadId');
    return unwrapAnswer(
      await kitCall('loadThread', () => this.handle.query(loadThreadQuery, this.capability, id)),
    );
  }

  /** SPEC S4.4: the caller's subtree. */
  async listThreads(): Promise<AgentThread[]> {
    return unwrapAnswer(
      await kitCall('listThreads', () => this.handle.query(listThreadsQuery, this.capability)),
    );
  }

  /** SPEC S4.7: the threads' latest turns once one ends a turn or is terminal; `timedOut` otherwise. */
  async wait(request: WaitRequestInput): Promise<WaitResult> {
    // A thread this sent a triggering message counts once that message's turn has ended, not while it
    // is idle before it: the turn's start may not have reached the root yet (SPEC S4.7).
    return this.askedTurns.wait(parseInput(WaitRequest, request, 'wait request'), (filled) =>
      waitAcrossRuns(filled, (once) =>
        longPoll(() => executeUpdate(this.handle, waitUpdate, [this.capability, once], 'wait')),
      ),
    );
  }

  /** SPEC S4.6: cancels the thread's running turn (its activities too); the thread stays alive and idle. */
  async interrupt(threadId: string): Promise<AgentInterruptReceipt> {
    const id = parseId('thread', threadId, 'threadId');
    // Straight to the thread's own workflow, which owns its running turn (SPEC S3.1).
    return outsideTheRun(
      executeUpdate(this.ownerOf(id), interruptUpdate, [this.capability, id], 'interrupt'),
      id,
    );
  }

  /** SPEC S4.8: ends a descendant and its subtree as cancelled; returns the closed threads. */
  async close(threadId: string): Promise<AgentThread[]> {
    const id = parseId('thread', threadId, 'threadId');
    return executeUpdate(this.handle, closeThreadUpdate, [this.capability, id], 'close');
  }

  /**
   * SPEC S4.5: the thread's changes (status, turn started/ended, latest result) in order, ending with
   * its terminal state. Long-polls the thread's own workflow.
   */
  async *subscribeThread(threadId: string): AsyncGenerator<ThreadChange> {
    const id = await this.visible(threadId);
    const handle = this.handle.client.getHandle(id);
    let version = 0;
    for (;;) {
      let answer: ThreadChanges | undefined;
      try {
        answer = await whenStarted(() =>
          withDeadline(this.handle.client, watchDeadlineMs, () =>
            longPoll(() =>
              executeUpdate(handle, watchThreadUpdate, [version, this.capability], 'subscribeThread'),
            ),
          ),
        );
      } catch (error) {
        if (!(error instanceof KitError && error.kind === ErrorKind.Closed)) throw error;
        // The thread's workflow has ended: its final state is in the root run's registry.
        const final = (await this.loadThread(id))!;
        yield {
          version: version + 1,
          status: final.status,
          turnsStarted: final.turnsStarted,
          turnsCompleted: final.turnsCompleted,
          ...(final.latestTurn ? { latestTurn: final.latestTurn } : {}),
          at: final.updatedAt,
        };
        return;
      }
      // No answer in time: poll again (a fresh update; the watch's version makes it lose nothing).
      if (!answer) continue;
      for (const change of answer.changes) yield change;
      version = answer.changes.at(-1)?.version ?? version;
      if (answer.terminal) return;
    }
  }

  /** SPEC S4.5: the thread's first turn's retained outcome — never a later turn's. */
  async subscribeFirstTurn(threadId: string): Promise<TurnOutcome> {
    const id = await this.visible(threadId);
    const handle = this.handle.client.getHandle(id);
    for (;;) {
      let first: TurnOutcome | null;
      try {
        first = await whenStarted(() =>
          longPoll(() => executeUpdate(handle, firstTurnUpdate, [this.capability], 'subscribeFirstTurn')),
        );
      } catch (error) {
        if (!(error instanceof KitError && error.kind === ErrorKind.Closed)) throw error;
        first = (await this.loadThread(id))?.firstTurn ?? null;
        if (!first)
          throw new KitError(ErrorKind.InvalidState, `thread ${id} ended without completing a first turn`);
      }
      if (first) return first;
      const thread = await this.loadThread(id);
      if (thread && isTerminal(thread.status) && !thread.firstTurn) {
        throw new KitError(ErrorKind.InvalidState, `thread ${id} ended without completing a first turn`);
      }
    }
  }

  private async visible(threadId: string): Promise<ThreadId> {
    const id = parseId('thread', threadId, 'threadId');
    if (!(await this.loadThread(id)))
      throw new KitError(ErrorKind.NotFound, `thread ${id} is not in the subtree of ${this.scope.threadId}`);
    return id;
  }

  /** SPEC S3.7 (root scope only). */
  async takeRootMessages(): Promise<InterAgentMessage[]> {
    return executeUpdate(this.handle, takeRootMessagesUpdate, [this.capability], 'takeRootMessages');
  }
}

/**
 * A thread id with no workflow is not a thread the caller may reach (SPEC S4.3: PermissionDenied, and
 * existence is not leaked); one whose workflow has ended stays Closed.
 */
async function outsideTheRun<Result>(call: Promise<Result>, threadId: string): Promise<Result> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof KitError && error.kind === ErrorKind.NotFound)
      throw new KitError(
        ErrorKind.PermissionDenied,
        `thread ${threadId} is not a thread of this run`,
        undefined,
        {
          cause: error,
        },
      );
    throw error;
  }
}

/**
 * How long one watch long-poll may take before it is given up and sent again. The thread answers within
 * its 20 s poll; under load an update has been seen to wait, unanswered, until the thread ended.
 */
const watchDeadlineMs = 25_000;

/**
 * Runs a call on a thread's own workflow, waiting while that workflow does not exist yet: a spawn
 * returns once admitted, and the child workflow starts a moment later.
 */
async function whenStarted<Result>(call: () => Promise<Result>): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof KitError && error.kind === ErrorKind.NotFound) || attempt >= 100) throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}
