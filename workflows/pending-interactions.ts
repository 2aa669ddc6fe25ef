import { condition } from '@temporalio/workflow';
import { canonicalJson, sha256Hex } from '../domain/bytes';
import type { Capability } from '../domain/capability';
import {
  maxRememberedResolutions,
  ResolveInteractionRequest,
  type InteractionAnswer,
  type InteractionResolution,
  type RememberedResolution,
  unansweredAnswer,
} from '../domain/conversation-schemas';
import { checkUpdateBytes } from '../domain/answer-bounds';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { relatedId } from '../domain/ids';
import type { AgentThread } from '../domain/schemas';
import type { PolicyReason } from '../domain/approval-policy';
import type { ThreadAuthority } from './thread-authority';

const answerFingerprint = (answer: InteractionAnswer) => sha256Hex(canonicalJson(answer));

/** An answer and the proven caller who gave it (none when the approval policy gave it). */
export interface Answered {
  answer: InteractionAnswer;
  by?: Capability;
}

/**
 * The interactions a thread waits on (SPEC S3.1, S5.4): the thread that asked takes the answer, by the
 * operation table's `resolve` (a client's update or another workflow's control request, served by
 * ThreadOperations), from a proven caller (itself or an ancestor), checked against the
 * interaction's kind; then it wakes and settles the item in its conversation and the root's mirror.
 * Resolving again with the same answer returns the same resolution; another answer is a Conflict.
 */
export class PendingInteractions {
  /** Each waiting interaction's kind, and the tool call an approval is for. */
  private readonly waiting = new Map<string, { kind: 'approval' | 'question'; tool?: string | undefined }>();
  private readonly answers = new Map<string, Answered>();
  private readonly resolved = new Map<string, RememberedResolution>();
  /**
   * SPEC S11.4: why the tree's approval policy cannot remember a tool (the thread's approval gate says);
   * without one, the run has no approval policy and no answer is remembered.
   */
  rememberRefusal?: (tool: string) => KitError | undefined;

  constructor(
    private readonly authority: ThreadAuthority,
    private readonly thread: () => AgentThread,
    carried: readonly RememberedResolution[],
    private readonly settle: (resolution: InteractionResolution) => void,
  ) {
    for (const entry of carried) this.resolved.set(entry.resolution.requestId, entry);
  }

  /**
   * The `resolve` operation's check (SPEC S2.4: in the update's validator, changing nothing): the caller
   * is proven and may answer for this thread, the request is well-formed, bounded, and names an
   * interaction this thread waits on (or resolved lately) with an answer of its kind.
   */
  checkResolve(capability: unknown, request: unknown): void {
    this.check(capability, parseInput(ResolveInteractionRequest, request, 'resolve request'));
    checkUpdateBytes(request, 'resolve request');
  }

  /** Waits for the answer to `requestId` (an approval of a call of `tool`, when given); undefined when none came within `timeoutMs`. */
  async wait(
    requestId: string,
    kind: 'approval' | 'question',
    timeoutMs: number,
    tool?: string,
  ): Promise<Answered | undefined> {
    this.waiting.set(requestId, { kind, tool });
    try {
      await condition(() => this.answers.has(requestId), timeoutMs);
    } finally {
      this.waiting.delete(requestId);
    }
    const answer = this.answers.get(requestId);
    this.answers.delete(requestId);
    return answer;
  }

  /**
   * SPEC S11.4: answers a waiting approval for the tree's approval policy, which now lets its call
   * through (`because`); settled as answered by the policy, for the root. False when it is not waiting.
   */
  releaseByPolicy(requestId: string, answer: InteractionAnswer, because: PolicyReason): boolean {
    if (this.waiting.get(requestId)?.kind !== 'approval' || this.answers.has(requestId)) return false;
    this.answers.set(requestId, { answer });
    this.record({
      requestId: requestId as InteractionResolution['requestId'],
      ...this.where(),
      answer,
      resolvedAt: new Date().toISOString(),
      resolvedBy: { threadId: this.authority.rootId, name: 'approval policy' },
      byPolicy: because,
    });
    return true;
  }

  /** Settles an interaction nobody answered in time with the answer it defaults to (denied). */
  timedOut(requestId: InteractionResolution['requestId'], answer: InteractionAnswer, at: string): void {
    this.record({ requestId, ...this.where(), answer, resolvedAt: at });
  }

  /**
   * Answers every interaction still waiting as nobody can any more (its conversation has ended): an
   * approval denied for `reason`, a question with no answer; each is settled as if it timed out.
   */
  abandonWaiting(reason: string, at: string): void {
    for (const [requestId, { kind }] of this.waiting) {
      if (this.answers.has(requestId)) continue;
      const answer = unansweredAnswer(kind, reason);
      this.answers.set(requestId, { answer });
      this.timedOut(requestId as InteractionResolution['requestId'], answer, at);
    }
  }

  /** What a next run needs to answer repeated resolves. */
  snapshot(): RememberedResolution[] {
    return [...this.resolved.values()];
  }

  /** SPEC S5.4: takes the answer (checked again: a workflow's request has no validator) and settles it. */
  resolve(capability: unknown, raw: unknown): InteractionResolution {
    const request = parseInput(ResolveInteractionRequest, raw, 'resolve request');
    checkUpdateBytes(raw, 'resolve request');
    const { caller, earlier } = this.check(capability, request);
    if (earlier) return { ...earlier.resolution, answer: request.answer };
    this.answers.set(request.requestId, { answer: request.answer, by: caller });
    const resolution: InteractionResolution = {
      requestId: request.requestId,
      ...this.where(),
      answer: request.answer,
      resolvedAt: new Date().toISOString(),
      resolvedBy: { threadId: caller.threadId, ...(request.name ? { name: request.name } : {}) },
    };
    this.record(resolution);
    return resolution;
  }

  /** The proven caller, and the earlier resolution a repeat gets; throws what the resolve is refused for. */
  private check(
    capability: unknown,
    request: ResolveInteractionRequest,
  ): { caller: Capability; earlier?: RememberedResolution } {
    const caller = this.authority.caller(capability);
    const thread = this.thread();
    this.authority.checkMayResolve(caller, thread.path);
    const { requestId, answer } = request;
    const earlier = this.resolved.get(requestId);
    if (earlier) {
      if (earlier.answerFingerprint !== answerFingerprint(answer))
        throw new KitError(
          ErrorKind.Conflict,
          `interaction ${requestId} was already resolved with a different answer`,
          { requestId, resolution: earlier.resolution },
        );
      return { caller, earlier };
    }
    const { kind, tool } = this.waiting.get(requestId) ?? {};
    if (!kind || this.answers.has(requestId))
      throw new KitError(
        ErrorKind.NotFound,
        `thread ${thread.path} has no pending interaction ${requestId}`,
        {
          requestId,
        },
      );
    if (answer.type !== kind)
      throw KitError.protocol(
        `answer.type: interaction ${requestId} is ${kind === 'approval' ? 'an' : 'a'} ${kind}, so the answer must have type '${kind}', not '${answer.type}'`,
        { fields: ['answer.type'] },
      );
    if (answer.type === 'approval' && answer.remember) this.checkRemember(caller, requestId, answer, tool);
    return { caller };
  }

  /** SPEC S11.4: an answer remembered for the tree approves a tool call, by the root's authority. */
  private checkRemember(
    caller: Capability,
    requestId: string,
    answer: { approved: boolean },
    tool: string | undefined,
  ): void {
    if (!this.rememberRefusal)
      throw new KitError(
        ErrorKind.Unsupported,
        'answer.remember: this run was started without an approval policy, so no answer is remembered',
      );
    if (!answer.approved)
      throw KitError.protocol('answer.remember: only an approval (approved: true) is remembered', {
        fields: ['answer.remember'],
      });
    if (tool === undefined)
      throw KitError.protocol(
        `answer.remember: interaction ${requestId} is not about a tool call, so there is nothing to remember`,
        { fields: ['answer.remember'] },
      );
    if (caller.threadId !== this.authority.rootId)
      throw new KitError(
        ErrorKind.PermissionDenied,
        `answer.remember: only the root's capability remembers an answer for the whole tree; thread ${caller.threadId} may answer this call, without remember`,
      );
    const refusal = this.rememberRefusal(tool);
    if (refusal) throw refusal;
  }

  private where() {
    const threadId = this.thread().id;
    return { threadId, conversationId: relatedId('conversation', threadId) };
  }

  private record(resolution: InteractionResolution): void {
    const { answer, ...rest } = resolution;
    this.resolved.set(resolution.requestId, {
      resolution: rest,
      answerType: answer.type,
      answerFingerprint: answerFingerprint(answer),
    });
    for (const oldest of this.resolved.keys()) {
      if (this.resolved.size <= maxRememberedResolutions) break;
      this.resolved.delete(oldest);
    }
    this.settle(resolution);
  }
}
