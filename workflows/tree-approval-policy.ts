import type { getExternalWorkflowHandle } from '@temporalio/workflow';
import { checkUpdateBytes } from '../domain/answer-bounds';
import { changedPolicy, rememberedPolicy, type ApprovalPolicy } from '../domain/approval-policy';
import { jsonBytes } from '../domain/bytes';
import { provenCapability, type Capability } from '../domain/capability';
import { ErrorKind, KitError } from '../domain/errors';
import { approvalPolicySignal } from '../domain/messages';
import type { ApprovalGate } from './approval-gate';
import type { TaskBudget } from './task-budget';

type ThreadHandle = ReturnType<typeof getExternalWorkflowHandle>;

/**
 * SPEC S11.4: the tree's approval policy, owned by the root run. A change (the root's update) or a
 * remembered answer (a thread's `remember-approval` request) makes a new version, which the root's own
 * gate takes at once and every live thread gets by a proven signal; threads started later get it in
 * their input. Each push waits for its thread's start and for room in the workflow task (SPEC S3.10).
 */
export class TreeApprovalPolicy {
  private current: ApprovalPolicy;

  constructor(
    policy: ApprovalPolicy,
    private readonly ports: {
      runKey: string;
      /** The root thread's capability: what pushes are proven with. */
      self: Capability;
      /** The root thread's own gate. */
      rootGate(): ApprovalGate | undefined;
      /** Ids of the threads whose workflows may be live (not terminal), the root's excepted. */
      liveThreads(): string[];
      /** Signals a thread's workflow once it has started (RootHost's). */
      signalThread(threadId: string, signal: (handle: ThreadHandle) => Promise<void>): void;
      budget: TaskBudget;
    },
  ) {
    this.current = policy;
  }

  /** The tree's policy now: what new threads start with, and what the root carries through continue-as-new. */
  get policy(): ApprovalPolicy {
    return this.current;
  }

  /** The update's validator: the change is well-formed, bounded and leaves a valid policy (changes nothing). */
  checkChange(change: unknown): void {
    checkUpdateBytes(change, 'approval policy change');
    changedPolicy(this.current, change);
  }

  /** Applies a change and gives the new policy to the whole tree. */
  change(change: unknown): ApprovalPolicy {
    this.checkChange(change);
    this.publish(changedPolicy(this.current, change));
    return this.current;
  }

  /**
   * A person answered an approval of `tool` with `remember: true`, proven by `by`: only the root's
   * capability remembers for the whole tree. Answers the policy the tree then has.
   */
  remember(tool: string, by: unknown): ApprovalPolicy {
    const resolver = provenCapability(this.ports.runKey, this.ports.self.rootId, by);
    if (resolver.threadId !== this.ports.self.rootId)
      throw new KitError(
        ErrorKind.PermissionDenied,
        `only the root's capability remembers an answer for the tree, not thread ${resolver.threadId}'s`,
      );
    const next = rememberedPolicy(this.current, tool);
    if (next !== this.current) this.publish(next);
    return this.current;
  }

  private publish(policy: ApprovalPolicy): void {
    this.current = policy;
    this.ports.rootGate()?.apply(policy);
    // A thread already owed a push gets one (the newest); one whose push is on its way, another.
    for (const threadId of this.ports.liveThreads()) this.due.add(threadId);
    this.pump();
  }

  /** Threads owed the newest policy, in order, and how many pushes are on their way. */
  private readonly due = new Set<string>();
  private inFlight = 0;

  /**
   * Sends the pushes owed, at most {@link maxPushesInFlight} at a time (Temporal fails a workflow's task
   * past 2,000 signals it has sent and not yet seen delivered); each sends the newest policy when it
   * goes, so a thread owed several changes while the pushes queue gets them in one.
   */
  private pump(): void {
    for (const threadId of this.due) {
      if (this.inFlight >= maxPushesInFlight) return;
      this.due.delete(threadId);
      this.inFlight++;
      this.ports.signalThread(threadId, async (handle) => {
        try {
          const push = { from: this.ports.self, policy: this.current };
          const later = this.ports.budget.take(jsonBytes(push));
          if (later) await later;
          await handle.signal(approvalPolicySignal, push);
        } finally {
          this.inFlight--;
          this.pump();
        }
      });
    }
  }
}

/** Policy pushes a root run has on their way at once. */
export const maxPushesInFlight = 500;

/** The run's policy, or Unsupported for a run attached without one. */
export function policyOrRefusal(policy: TreeApprovalPolicy | undefined): TreeApprovalPolicy {
  if (!policy)
    throw new KitError(
      ErrorKind.Unsupported,
      'this root run was started without an approval policy (attach it with agents-kit 0.2 or later)',
    );
  return policy;
}
