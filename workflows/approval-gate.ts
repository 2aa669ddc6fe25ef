import { isCancellation, log, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import {
  ApprovalPolicy,
  ApprovalPolicyPush,
  decideApproval,
  type GatedToolResult,
  policyAnswerReason,
  rememberRefusal,
} from '../domain/approval-policy';
import { capabilityRefusal, type Capability } from '../domain/capability';
import { kitErrorFromFailure } from '../domain/errors';
import { approvalPolicySignal } from '../domain/messages';
import type { AgentThread } from '../domain/schemas';
import type { TurnContext } from './kernel';
import type { ThreadAuthority } from './thread-authority';
import type { ThreadConversation } from './thread-conversation';
import { signalDropped } from './workflow-metrics';

/** Whether a tool declares needsApproval: only the worker knows (a local activity, no task round trip). */
const { toolNeedsApproval } = proxyLocalActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** A tool call at the gate; `declared` is the tool's `needsApproval`, undefined when the kernel does not know it. */
export interface GatedCall {
  name: string;
  input: unknown;
  declared: boolean | undefined;
}

/**
 * What the gate says of a call: it may run, a person denied it (or nobody answered in time), or — for a
 * call whose `declared` was unknown and that the policy does not decide — the tool's own
 * `needsApproval` decides (the kernel asks again once it knows it).
 */
export type ApprovalVerdict =
  { approved: true } | { approved: false; reason: string } | { approved: 'declared' };

/** Told when the gate asks a person and when the answer comes (the turn's trace events, SPEC S11.2). */
export interface ApprovalWatch {
  asked(call: GatedCall): void;
  answered(call: GatedCall, approved: boolean): void;
}

/** The gate as a kernel sees it (TurnContext.approval). */
export interface ToolApproval {
  check(call: GatedCall, watch?: ApprovalWatch): Promise<ApprovalVerdict>;
}

/** What a tool call a person denied gives the kernel instead of the tool's output (a result, not a crash). */
export const deniedOutput = (reason: string) => ({
  denied: true,
  reason: `a person denied this call: ${reason}`,
});

/**
 * SPEC S11.4, S6.1: the one approval gate every kernel's tool calls pass (the model kernel's and the
 * scripted kernel's `tool` steps alike), in runs with an approval policy. It decides each call by the
 * tree's policy and the tool's `needsApproval`, asks a person through the thread's conversation when
 * it must, and releases a waiting approval as soon as a newer policy lets its call through (the item is
 * settled as answered by the policy). An approval answered with `remember: true` goes to the root run,
 * which remembers the tool for the tree and gives every live thread the new policy.
 */
export class ApprovalGate implements ToolApproval {
  private current: ApprovalPolicy;
  /** Approvals waiting for a person: request id → the call. */
  private readonly waiting = new Map<string, { tool: string; declared: boolean }>();

  constructor(
    policy: ApprovalPolicy,
    private readonly ports: {
      thread(): AgentThread;
      conversation: Pick<ThreadConversation, 'raise' | 'interactions' | 'publish'>;
      /** Tells the policy's owner (the root run) that `by` remembered `tool`; answers the policy it then has. */
      remember(tool: string, by: Capability): Promise<ApprovalPolicy>;
    },
  ) {
    this.current = policy;
    // A remembered answer is refused at once (in the resolve's validator) when the policy cannot take it.
    ports.conversation.interactions.rememberRefusal = (tool) => rememberRefusal(this.current, tool);
  }

  /** The newest policy this thread has: carried through continue-as-new. */
  get policy(): ApprovalPolicy {
    return this.current;
  }

  /**
   * Takes a newer policy (an older or the same version changes nothing) and releases each waiting
   * approval whose call it now lets through.
   */
  apply(policy: ApprovalPolicy): void {
    if (policy.version <= this.current.version) return;
    this.current = policy;
    for (const [requestId, call] of this.waiting) {
      const decision = decideApproval(policy, call.tool, call.declared);
      if (decision.ask !== false) continue;
      const reason = policyAnswerReason(call.tool, decision.because);
      this.ports.conversation.interactions.releaseByPolicy(
        requestId,
        { type: 'approval', approved: true, reason },
        decision.because,
      );
    }
  }

  async check(call: GatedCall, watch?: ApprovalWatch): Promise<ApprovalVerdict> {
    let decision = decideApproval(this.current, call.name, call.declared);
    let declared = call.declared;
    if (decision.ask === true && declared === undefined) {
      // Asked for by the policy alone: what the tool declares decides once the policy stops asking.
      declared = await toolNeedsApproval({ name: call.name });
      decision = decideApproval(this.current, call.name, declared);
    }
    if (decision.ask === false) return { approved: true };
    if (decision.ask === 'declared' || declared === undefined) return { approved: 'declared' };
    const thread = this.ports.thread();
    const why =
      decision.because === 'always-ask' ? ` (the approval policy always asks for ${call.name})` : '';
    let requestId: string | undefined;
    watch?.asked(call);
    const { answer, by } = await (async () => {
      try {
        return await this.ports.conversation.raise(
          {
            kind: 'approval',
            prompt: `${thread.path} wants to run ${call.name}${why}`,
            tool: { name: call.name, input: call.input },
          },
          (raised) => {
            requestId = raised;
            this.waiting.set(raised, { tool: call.name, declared });
          },
        );
      } finally {
        if (requestId) this.waiting.delete(requestId);
      }
    })();
    watch?.answered(call, answer.type === 'approval' && answer.approved);
    if (answer.type !== 'approval' || !answer.approved)
      return {
        approved: false,
        reason: answer.type === 'approval' ? (answer.reason ?? 'no reason given') : 'no approval',
      };
    if (answer.remember && by) await this.remember(call.name, by);
    return { approved: true };
  }

  /** The root run remembers the tool for the tree; this thread takes the policy it answers at once. */
  private async remember(tool: string, by: Capability): Promise<void> {
    try {
      this.apply(ApprovalPolicy.parse(await this.ports.remember(tool, by)));
    } catch (error) {
      // An interrupt while the root answered ends the turn: the call does not run.
      if (isCancellation(error)) throw error;
      // The call itself was approved and runs; only the "always" part did not take.
      const reason = kitErrorFromFailure(error)?.message ?? String(error);
      log.warn('a remembered approval was not taken by the root run', { tool, error: reason });
      this.ports.conversation.publish({
        type: 'status',
        event: 'approval-not-remembered',
        threadId: this.ports.thread().id,
        detail: `${tool}: ${reason.slice(0, 1_000)}`,
      });
    }
  }
}

/**
 * Registers the root run's policy pushes to a sub-agent: only a proven signal from the root changes its
 * gate's policy; anything else (and every push to a thread without a gate) is dropped (SPEC S3.9, S3.10).
 */
export function registerPolicyPushes(gate: ApprovalGate | undefined, authority: ThreadAuthority): void {
  setHandler(approvalPolicySignal, (raw) => {
    const push = ApprovalPolicyPush.safeParse(raw);
    const proven =
      push.success &&
      push.data.from.threadId === authority.rootId &&
      capabilityRefusal(authority.runKey, authority.rootId, push.data.from) === undefined;
    if (!proven || !gate) {
      signalDropped(
        approvalPolicySignal.name,
        !push.success ? 'malformed' : proven ? 'refused' : 'unproven',
        'dropped an approval policy that is not from the root run',
        { threadId: authority.threadId },
      );
      return;
    }
    gate.apply(push.data.policy);
  });
}

/**
 * A scripted `tool` step through the gate. The policy decides first; when it leaves the call to the
 * tool's own `needsApproval`, which only the worker knows, the tool activity runs it unless it declares
 * it (one activity either way for a tool that needs no approval), and the gate asks before it runs.
 */
export async function runGatedTool(
  context: Pick<TurnContext, 'runTool'>,
  approval: ToolApproval,
  name: string,
  input: unknown,
): Promise<unknown> {
  let verdict = await approval.check({ name, input, declared: undefined });
  if (verdict.approved === 'declared') {
    const first = (await context.runTool(name, input, { unlessNeedsApproval: true })) as GatedToolResult;
    if (first.type === 'ran') return first.output;
    verdict = await approval.check({ name, input, declared: true });
  }
  if (verdict.approved !== true)
    return deniedOutput(verdict.approved === false ? verdict.reason : 'no approval');
  return context.runTool(name, input);
}
