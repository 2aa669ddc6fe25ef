import { z } from 'zod';
import { jsonBytes } from './bytes';
import { Capability } from './capability';
import { ErrorKind, KitError, parseInput } from './errors';
import { allTools, ToolName } from './tool-names';

/**
 * SPEC S11.4: a tree's approval policy. The root run owns it (an update by the root's capability
 * changes it) and gives it to every thread it starts; a change reaches the live threads by a proven
 * signal, numbered by `version`, so a thread keeps the newest it has seen. Pure: workflow-safe.
 */

/** The most names each list of a policy holds. */
export const maxPolicyTools = 128;
/**
 * The most a whole policy takes as JSON. It travels in every thread's start input and in every
 * continue-as-new input (SPEC S3.10; counted in `continue-as-new-input.test.ts`).
 */
export const maxPolicyBytes = 12 * 1024;

/** Adds an issue for each name listed twice. */
const noRepeats = (names: readonly string[], context: z.RefinementCtx) => {
  names.forEach((name, index) => {
    if (names.indexOf(name) !== index)
      context.addIssue({ code: 'custom', path: [index], message: `${name} is listed twice` });
  });
};

const toolList = z
  .array(ToolName)
  .max(maxPolicyTools, `at most ${maxPolicyTools} tool names`)
  .superRefine(noRepeats);

/** A tool whose approval was remembered: one tool, never `*`. */
const RememberedTool = ToolName.refine(
  (name) => name !== allTools,
  "'*' cannot be remembered: an answer is remembered for one tool",
);
const rememberedList = z
  .array(RememberedTool)
  .max(maxPolicyTools, `at most ${maxPolicyTools} remembered tools`)
  .superRefine(noRepeats);

/**
 * What decides whether a tool call waits for a person. Most specific first: a tool named in `alwaysAsk`
 * asks; named in `neverAsk` it runs; `remembered` (a person's "always allow" for this run) runs; then `*`
 * in `alwaysAsk` asks and `*` in `neverAsk` runs; otherwise the tool's own `needsApproval` decides.
 */
export const ApprovalPolicy = z
  .object({
    /** Raised by every change; a thread applies only a policy newer than the one it has. */
    version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    /** Tools that run without approval, even when they declare `needsApproval`. */
    neverAsk: toolList,
    /** Tools that need approval, even when they do not declare it. */
    alwaysAsk: toolList,
    /** Tools a person allowed for the rest of the run (an approval answered with `remember: true`). */
    remembered: rememberedList,
  })
  .strict()
  .superRefine((policy, context) => {
    policy.alwaysAsk.forEach((name, index) => {
      if (policy.neverAsk.includes(name))
        context.addIssue({
          code: 'custom',
          path: ['alwaysAsk', index],
          message: `${name} is in neverAsk too: a tool is either never or always asked`,
        });
    });
    policy.remembered.forEach((name, index) => {
      if (policy.alwaysAsk.includes(name))
        context.addIssue({
          code: 'custom',
          path: ['remembered', index],
          message: `${name} is in alwaysAsk: its answers are not remembered`,
        });
    });
    const bytes = jsonBytes(policy);
    if (bytes > maxPolicyBytes)
      context.addIssue({
        code: 'custom',
        message: `${bytes} bytes is over the ${maxPolicyBytes}-byte limit of an approval policy (all lists together)`,
      });
  });
export type ApprovalPolicy = z.infer<typeof ApprovalPolicy>;

/**
 * A change of the policy: each list given replaces the current one, each left out stays (`remembered:
 * []` forgets every remembered answer). Every change raises the version and reaches every live thread;
 * a tool put in `alwaysAsk` is forgotten from `remembered`.
 */
export const ApprovalPolicyChange = z
  .object({
    neverAsk: toolList.optional(),
    alwaysAsk: toolList.optional(),
    remembered: rememberedList.optional(),
  })
  .strict();
export type ApprovalPolicyChange = z.infer<typeof ApprovalPolicyChange>;

/**
 * Refuses a change that names no list (Protocol): it would raise the version and push the same policy to
 * every live thread for nothing. Checked where a change is asked for (the client and the update's
 * validator), not where it is applied, so a history that holds one replays as it ran.
 */
export function checkChangeNamesAList(change: unknown): void {
  const given = change && typeof change === 'object' ? Object.keys(change) : [];
  if (given.length === 0)
    throw KitError.protocol(
      'approval policy change: names no list; give neverAsk, alwaysAsk or remembered (approvalPolicy() reads the policy)',
    );
}

/** The policy a root run starts with (attach): the two lists, nothing remembered yet. */
export const InitialApprovalPolicy = ApprovalPolicyChange.omit({ remembered: true });
export type InitialApprovalPolicy = z.infer<typeof InitialApprovalPolicy>;

/** Root run → a live thread of its tree: the newest policy, proven by the root's capability. */
export const ApprovalPolicyPush = z.object({ from: Capability, policy: ApprovalPolicy }).strict();
export type ApprovalPolicyPush = z.infer<typeof ApprovalPolicyPush>;

/** The policy of a new root run (version 0); Protocol naming the field when a list is malformed. */
export function initialApprovalPolicy(initial: unknown = {}): ApprovalPolicy {
  const lists = parseInput(InitialApprovalPolicy, initial, 'approval policy');
  return parseInput(
    ApprovalPolicy,
    { version: 0, neverAsk: lists.neverAsk ?? [], alwaysAsk: lists.alwaysAsk ?? [], remembered: [] },
    'approval policy',
  );
}

/** The policy after `change` (Protocol naming the field, when the result would be malformed or too large). */
export function changedPolicy(policy: ApprovalPolicy, rawChange: unknown): ApprovalPolicy {
  const change = parseInput(ApprovalPolicyChange, rawChange, 'approval policy change');
  const alwaysAsk = change.alwaysAsk ?? policy.alwaysAsk;
  const remembered = change.remembered ?? policy.remembered.filter((name) => !alwaysAsk.includes(name));
  return parseInput(
    ApprovalPolicy,
    { version: policy.version + 1, neverAsk: change.neverAsk ?? policy.neverAsk, alwaysAsk, remembered },
    'approval policy change',
  );
}

/**
 * Why `tool` cannot be remembered in `policy`, or undefined when it can (or already is): a tool the
 * policy always asks for (PermissionDenied), or a list or policy at its bound (QuotaExceeded).
 */
export function rememberRefusal(policy: ApprovalPolicy, tool: string): KitError | undefined {
  if (!RememberedTool.safeParse(tool).success)
    return KitError.protocol(
      `tool: ${JSON.stringify(tool).slice(0, 120)} is not a tool that can be remembered`,
    );
  if (policy.remembered.includes(tool)) return undefined;
  if (policy.alwaysAsk.includes(tool))
    return new KitError(
      ErrorKind.PermissionDenied,
      `the approval policy asks for ${tool} every time (alwaysAsk): an answer for it cannot be remembered`,
    );
  const next = { ...policy, remembered: [...policy.remembered, tool] };
  if (next.remembered.length > maxPolicyTools || jsonBytes(next) > maxPolicyBytes)
    return new KitError(
      ErrorKind.QuotaExceeded,
      `the approval policy remembers as much as it can hold (${maxPolicyTools} tools, ${maxPolicyBytes} bytes): ${tool} is not remembered; forget some (remembered: []) or list it in neverAsk`,
      { limit: 'approvalPolicy', value: maxPolicyBytes },
    );
  return undefined;
}

/** The policy with `tool` remembered (the same policy when it already is); throws what {@link rememberRefusal} says. */
export function rememberedPolicy(policy: ApprovalPolicy, tool: string): ApprovalPolicy {
  const refusal = rememberRefusal(policy, tool);
  if (refusal) throw refusal;
  if (policy.remembered.includes(tool)) return policy;
  return { ...policy, version: policy.version + 1, remembered: [...policy.remembered, tool] };
}

/** Why a call asks: the policy always asks for the tool, or the tool declares `needsApproval`. */
export type AskReason = 'always-ask' | 'declared';
/** Why a call runs without asking: the policy never asks, a person's answer is remembered, or nothing asks for it. */
export type PolicyReason = 'never-ask' | 'remembered' | 'not-needed';

/**
 * What the gate does with one call: ask a person, run it, or — when the kernel does not know whether
 * the tool declares `needsApproval` and the policy does not decide — leave it to that declaration.
 */
export type ApprovalDecision =
  { ask: true; because: AskReason } | { ask: false; because: PolicyReason } | { ask: 'declared' };

/**
 * SPEC S11.4: whether a call of `tool` waits for a person. `declared` is the tool's `needsApproval`
 * (undefined when the kernel does not know it yet).
 */
export function decideApproval(
  policy: ApprovalPolicy,
  tool: string,
  declared: boolean | undefined,
): ApprovalDecision {
  if (policy.alwaysAsk.includes(tool)) return { ask: true, because: 'always-ask' };
  if (policy.neverAsk.includes(tool)) return { ask: false, because: 'never-ask' };
  if (policy.remembered.includes(tool)) return { ask: false, because: 'remembered' };
  if (policy.alwaysAsk.includes(allTools)) return { ask: true, because: 'always-ask' };
  if (policy.neverAsk.includes(allTools)) return { ask: false, because: 'never-ask' };
  if (declared === undefined) return { ask: 'declared' };
  return declared ? { ask: true, because: 'declared' } : { ask: false, because: 'not-needed' };
}

/** What a call the policy let through says, in the answer it is settled with. */
export function policyAnswerReason(tool: string, because: PolicyReason): string {
  switch (because) {
    case 'never-ask':
      return `the approval policy never asks for ${tool}`;
    case 'remembered':
      return `a person allowed ${tool} for the rest of the run`;
    case 'not-needed':
      return `the approval policy no longer asks for ${tool}`;
  }
}

/**
 * What the tool activity answers a call made `unlessNeedsApproval` (a scripted step the policy left to
 * the tool): it ran, or it did not because the tool declares `needsApproval`.
 */
export type GatedToolResult = { type: 'ran'; output: unknown } | { type: 'needs-approval' };
