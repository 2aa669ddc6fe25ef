import {
  CancellationScope,
  ChildWorkflowCancellationType,
  condition,
  isCancellation,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  patched,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import {
  adoptConversationSignal,
  interactionSettledSignal,
  publishSignal,
} from '../domain/conversation-messages';
import {
  unansweredAnswer,
  type InteractionAnswer,
  type InteractionResolution,
  type NotificationDraft,
  type RememberedResolution,
} from '../domain/conversation-schemas';
import { newId, relatedId, type ConversationId } from '../domain/ids';
import type { AgentThread, NotificationBody } from '../domain/schemas';
import { conversationWorkflow } from './conversation-workflow';
import { workflowGone } from './outside-ends';
import { patches } from './patches';
import { PendingInteractions, type Answered } from './pending-interactions';
import type { ThreadAuthority } from './thread-authority';
import { TaskBudget } from './task-budget';
import { jsonBytes } from '../domain/bytes';

/**
 * Bounds of one publish signal: the schema's 1,000 notifications, and 256 K characters of JSON (at most
 * 768 KiB of UTF-8, well inside Temporal's 2 MiB payload limit).
 */
const maxBatch = { notifications: 1000, chars: 256 * 1024 };

interface PendingNotification {
  notification: NotificationDraft;
  /** Its JSON size in characters, for `maxBatch`. */
  chars: number;
  mirrorInteractionsTo?: ConversationId | undefined;
}

/**
 * Resolves once the current activation's microtasks have run: a condition is evaluated once when it is
 * made (false here) and again only after them.
 */
function activationSettled(): Promise<void> {
  let made = false;
  return condition(() => made || !(made = true));
}

/** What an agent asks a person (SPEC S5.1): approve a tool call, or answer a question. */
export interface InteractionRequest {
  kind: 'approval' | 'question';
  prompt: string;
  tool?: { name: string; input: unknown };
}

/**
 * A thread's side of its conversation (SPEC S5): the conversation workflow is started as an abandoned
 * child, so its backlog outlives the agent (S5.2); notifications are published by signal; interactions
 * are mirrored to the root's conversation (S5.9) and wait for an answer, or time out as denied.
 */
export class ThreadConversation {
  readonly conversationId: ConversationId;
  private readonly rootConversationId: ConversationId;
  /** The interactions this thread waits on, and those it resolved lately (SPEC S5.4). */
  readonly interactions: PendingInteractions;
  private readonly outgoing = new Set<Promise<void>>();
  private started: Promise<void> = Promise.resolve();
  /** Notifications not sent yet, oldest first, and whether a signal is in flight or about to be sent. */
  private readonly pending: PendingNotification[] = [];
  private publishing = false;

  constructor(
    private readonly thread: () => AgentThread,
    private readonly settings: { interactionTimeoutMs: number; retentionMs: number },
    private readonly authority: ThreadAuthority,
    resolutions: readonly RememberedResolution[] = [],
    /** What the workflow's task may still send (SPEC S3.10: a batch may be hundreds of kB). */
    private readonly budget = new TaskBudget(),
  ) {
    this.conversationId = relatedId('conversation', thread().id);
    this.rootConversationId = relatedId('conversation', thread().rootId);
    this.interactions = new PendingInteractions(authority, thread, resolutions, (resolution) =>
      this.settle(resolution),
    );
  }

  /** Where this thread's model calls stream their text (SPEC S10.1), with the proof the conversation checks. */
  get liveTarget() {
    return { conversationId: this.conversationId, from: this.authority.self };
  }

  /** Who its conversation belongs to (SPEC S3.9): this thread, under its run's key. */
  private get owner() {
    return {
      rootId: this.authority.rootId,
      threadId: this.authority.threadId,
      lineage: this.authority.self.lineage,
      runKey: this.authority.runKey,
      retentionMs: this.settings.retentionMs,
    };
  }

  /**
   * On a thread's first run, starts its conversation workflow at the end of this activation, with what
   * the thread published in it (its first turn's start) as its input.
   */
  open(firstRun: boolean): void {
    if (!firstRun) return;
    // Publishing waits for the start: the first batch travels in it, later ones follow in order.
    this.publishing = true;
    this.started = (async () => {
      await activationSettled();
      const first = this.publishRequest(this.takeBatch());
      const later = first && this.budget.take(jsonBytes(first));
      if (later) await later;
      try {
        await startChild(conversationWorkflow, {
          workflowId: this.conversationId,
          taskQueue: this.thread().taskQueue,
          parentClosePolicy: ParentClosePolicy.ABANDON,
          // The backlog outlives the thread (SPEC S5.2): a cancel request to the thread stops the thread
          // (workflows/cancel-request.ts), and is not passed on to its conversation.
          cancellationType: ChildWorkflowCancellationType.ABANDON,
          args: [
            {
              protocolVersion: 1,
              conversationId: this.conversationId,
              owner: this.owner,
              ...(first ? { first } : {}),
            },
          ],
          staticSummary: `conversation of ${this.thread().path}`,
        });
      } catch {
        // A receiver started it first (its start options carry no owner): claim it, then publish.
        const conversation = getExternalWorkflowHandle(this.conversationId);
        await conversation
          .signal(adoptConversationSignal, { owner: this.owner, from: this.authority.self })
          .catch((error: unknown) => log.warn('conversation claim failed', { error: String(error) }));
        if (first) await this.signalPublish(first);
      } finally {
        this.publishing = false;
        if (this.pending.length > 0) this.publishInOrder();
      }
    })();
    this.track(this.started);
  }

  /** Publishes a passive notification (a status or a message for people). */
  publish(body: NotificationBody): void {
    this.send(body);
  }

  /** Raises an interaction and waits for its answer; unanswered within the grant's timeout, it is denied. */
  async ask(request: InteractionRequest): Promise<InteractionAnswer> {
    return (await this.raise(request)).answer;
  }

  /**
   * {@link ask}, telling `raised` the interaction's request id as it is raised (so the approval gate can
   * release it), and answering who gave the answer.
   */
  async raise(request: InteractionRequest, raised?: (requestId: string) => void): Promise<Answered> {
    const requestId = newId('request', uuid4);
    raised?.(requestId);
    const expiresAt = new Date(Date.now() + this.settings.interactionTimeoutMs).toISOString();
    const thread = this.thread();
    this.send(
      {
        type: 'interaction',
        requestId,
        threadId: thread.id,
        kind: request.kind,
        prompt: request.prompt,
        expiresAt,
        ...(request.tool ? { tool: request.tool } : {}),
      },
      thread.id === thread.rootId ? undefined : this.rootConversationId,
    );
    const unanswered = (reason: string) => unansweredAnswer(request.kind, reason);
    let answer: Answered | undefined;
    try {
      answer = await this.interactions.wait(
        requestId,
        request.kind,
        this.settings.interactionTimeoutMs,
        request.tool?.name,
      );
    } catch (error) {
      // The turn was interrupted while it waited: the interaction is settled as denied everywhere (a
      // receiver is not offered it any more, a later answer gets this resolution), then the
      // cancellation goes on.
      if (isCancellation(error))
        await CancellationScope.nonCancellable(async () =>
          this.interactions.timedOut(
            requestId,
            unanswered('the turn was interrupted before an answer'),
            new Date().toISOString(),
          ),
        );
      throw error;
    }
    if (answer) return answer;
    const denied = unanswered('timed out unanswered');
    // Settle it everywhere, so no receiver is offered an interaction nobody waits for any more.
    this.interactions.timedOut(requestId, denied, new Date().toISOString());
    return { answer: denied };
  }

  /**
   * Records a settled interaction in this thread's conversation, which settles the root's mirror it made
   * (SPEC S5.9); before the patch, the thread signalled the root's conversation itself.
   */
  private settle(resolution: InteractionResolution): void {
    const byConversation = patched(patches.mirrorSettledByConversation);
    const targets = byConversation
      ? [this.conversationId]
      : new Set([this.conversationId, this.rootConversationId]);
    for (const target of targets) {
      this.track(
        this.started.then(() =>
          getExternalWorkflowHandle(target).signal(interactionSettledSignal, {
            from: this.authority.self,
            resolution,
            ...(byConversation ? { settleMirror: true as const } : {}),
          }),
        ),
      );
    }
  }

  /** Publishing and settling still in flight. */
  get idle(): boolean {
    return this.outgoing.size === 0 && this.pending.length === 0;
  }

  /**
   * Sends a notification (SPEC S5.2: the conversation numbers notifications in the order they arrive).
   * One publish signal is in flight at a time: signals sent together may arrive in any order (a turn's
   * end was seen before its start). What is published meanwhile waits and goes in the next signal, with
   * everything else published up to the end of that activation: a turn's start, reply and end usually
   * make one signal, one action and one conversation task instead of three.
   */
  private send(body: NotificationBody, mirrorInteractionsTo?: ConversationId): void {
    const notification = { id: newId('notification', uuid4), createdAt: new Date().toISOString(), body };
    this.pending.push({ notification, chars: JSON.stringify(notification).length, mirrorInteractionsTo });
    if (!this.publishing) this.publishInOrder();
  }

  private publishInOrder(): void {
    this.publishing = true;
    // Not cancelled with the turn that published: an interrupted turn's notifications still go.
    const publishing = CancellationScope.nonCancellable(async () => {
      try {
        while (this.pending.length > 0) {
          await activationSettled();
          const request = this.publishRequest(this.takeBatch())!;
          const later = this.budget.take(jsonBytes(request));
          if (later) await later;
          await this.started;
          await this.signalPublish(request);
        }
      } finally {
        // In the same microtask as the last check: a notification sent after it starts a new loop.
        this.publishing = false;
      }
    });
    this.track(publishing);
  }

  /** The oldest waiting notifications that fit one publish signal (at least one). */
  private takeBatch(): PendingNotification[] {
    let count = 0;
    let chars = 0;
    for (const { chars: size } of this.pending) {
      if (count === maxBatch.notifications || (count > 0 && chars + size > maxBatch.chars)) break;
      count++;
      chars += size;
    }
    return this.pending.splice(0, count);
  }

  /** Sends one batch; a failed signal is logged (the next batch still goes). */
  private signalPublish(request: NonNullable<ReturnType<ThreadConversation['publishRequest']>>) {
    return getExternalWorkflowHandle(this.conversationId)
      .signal(publishSignal, request)
      .catch((error: unknown) => {
        log.warn('publish signal failed', { error: String(error) });
        if (workflowGone(error)) this.conversationGone();
      });
  }

  /**
   * Its conversation has ended while the thread lives (cancelled or terminated from outside): nobody sees
   * or can answer what the thread asks, so what it waits on is denied now, not at its timeout (patch
   * `conversationGoneDenies`; asked when a publish finds it gone). A later ask is denied as its publish
   * fails.
   */
  private conversationGone(): void {
    if (!patched(patches.conversationGoneDenies)) return;
    log.warn('the thread’s conversation has ended: its interactions are denied', {
      conversationId: this.conversationId,
    });
    this.interactions.abandonWaiting(
      'the thread’s conversation has ended, so nobody can answer',
      new Date().toISOString(),
    );
  }

  /** The publish request of a batch (none for an empty one). */
  private publishRequest(batch: PendingNotification[]) {
    if (batch.length === 0) return undefined;
    const mirrorInteractionsTo = batch.find((entry) => entry.mirrorInteractionsTo)?.mirrorInteractionsTo;
    return {
      notifications: batch.map((entry) => entry.notification),
      from: this.authority.self,
      ...(mirrorInteractionsTo ? { mirrorInteractionsTo } : {}),
    };
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) =>
      log.warn('conversation signal failed', { error: String(error) }),
    );
    this.outgoing.add(tracked);
    void tracked.finally(() => this.outgoing.delete(tracked));
  }
}
