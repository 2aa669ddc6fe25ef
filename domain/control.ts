import { z } from 'zod';
import { ApprovalPolicy } from './approval-policy';
import { UsageLedger } from './usage';
import { Capability, RunKey } from './capability';
import { ErrorKind, isErrorKind, KitError } from './errors';
import { maxRememberedResolutions, RememberedResolution } from './conversation-schemas';
import { MailboxSnapshot } from './mailbox';
import { RecentAnswers } from './recent-answers';
import { ThreadId } from './ids';
import { ControlOperation, WaitRequest, type WaitResult } from './operations';
import {
  AgentSpec,
  AgentThread,
  DelegationGrant,
  RetentionMs,
  SpawnRequest,
  ThreadStatus,
  TurnOutcome,
} from './schemas';

export {
  AgentInterruptReceipt,
  ControlOperation,
  type ControlOperationInput,
  type ControlResults,
  defaultWaitTimeoutMs,
  operationOwners,
  ownerOf,
  WaitRequest,
  type WaitRequestInput,
  WaitResult,
} from './operations';

/**
 * Workflow → workflow: perform a control operation on behalf of the sender, whose capability proves who
 * it is (SPEC S3.9). Sent to the operation's owner (SPEC S3.1).
 */
export const ControlRequest = z
  .object({ from: Capability, operationId: z.string().min(1).max(200), operation: ControlOperation })
  .strict();
export type ControlRequest = z.infer<typeof ControlRequest>;

/** The owner's answer to a ControlRequest, proven by the owner's capability. */
export const ControlResponse = z
  .object({
    from: Capability,
    operationId: z.string().max(200),
    result: z.unknown().optional(),
    error: z
      .object({ kind: z.string().max(100), message: z.string().max(10_000), details: z.unknown().optional() })
      .strict()
      .optional(),
  })
  .strict();
export type ControlResponse = z.infer<typeof ControlResponse>;

/** Root run → agent: close the thread (the `close-thread` signal's payload), proven by the root. */
export const CloseThreadRequest = z.object({ from: Capability, reason: z.string().max(1_000) }).strict();
export type CloseThreadRequest = z.infer<typeof CloseThreadRequest>;

/** What an agent workflow reports to its root run about itself. */
export const ThreadEvent = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('turn-start'),
      threadId: ThreadId,
      turn: z.number().int().min(1),
      at: z.string().max(100),
    })
    .strict(),
  z
    .object({
      type: z.literal('turn-end'),
      threadId: ThreadId,
      outcome: TurnOutcome,
      nextStatus: z.enum(['idle', 'running']),
      /** Tokens spent of the thread's allowance since it last said (SPEC S6.4). */
      spentTokens: z.number().int().min(0).max(1e12).optional(),
      /** SPEC S11.3: micro-dollars spent of its allowance since it last said (a tree with a dollar budget). */
      spentMicroUsd: z.number().int().min(0).max(1e15).optional(),
      /** SPEC S11.3: what its model calls used since it last said, for the tree's ledger. */
      usage: UsageLedger.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('thread-end'),
      threadId: ThreadId,
      status: ThreadStatus,
      at: z.string().max(100),
      /** Tokens the thread had set aside and did not use, given back (SPEC S6.4). */
      unusedTokens: z.number().int().min(0).max(1e9).optional(),
      /** SPEC S11.3: micro-dollars it had set aside and did not use, given back. */
      unusedMicroUsd: z.number().int().min(0).max(1e15).optional(),
    })
    .strict(),
]);
export type ThreadEvent = z.infer<typeof ThreadEvent>;

/** The `thread-event` signal's payload: the event, and the capability of the thread it is about. */
export const ThreadReport = z.object({ from: Capability, event: ThreadEvent }).strict();
export type ThreadReport = z.infer<typeof ThreadReport>;

/** The turn-loop state a thread carries through continue-as-new. */
export const ThreadLoopState = z
  .object({
    turn: z.number().int().min(0),
    turnRequested: z.boolean(),
    memory: z.record(z.string(), z.string()),
    idleSince: z.string().nullable(),
  })
  .strict();
export type ThreadLoopState = z.infer<typeof ThreadLoopState>;

/** One observed state of a thread, for subscribers (SPEC S4.5). */
export const ThreadChange = z
  .object({
    version: z.number().int().min(1),
    status: ThreadStatus,
    turnsStarted: z.number().int().min(0),
    turnsCompleted: z.number().int().min(0),
    latestTurn: TurnOutcome.optional(),
    at: z.string(),
  })
  .strict();
export type ThreadChange = z.infer<typeof ThreadChange>;

/** A thread's recent changes and its retained first turn, carried through continue-as-new. */
export const WatchSnapshot = z
  .object({ changes: z.array(ThreadChange), firstTurn: TurnOutcome.optional() })
  .strict();
export type WatchSnapshot = z.infer<typeof WatchSnapshot>;

/** Continue-as-new once the history has this many events (or when Temporal suggests it). */
export const defaultContinueAsNewAfterEvents = 4000;

/** How often a root run asks whether its earlier runs' sub-agents still run (5 minutes; SPEC S4.4). */
export const defaultOutsideEndsCheckMs = 300_000;

/** What a thread holds to spend of a budget, and what it spent past that (workflows/token-allowance.ts). */
const AllowanceState = z
  .object({
    allowance: z.number().int().min(0),
    owed: z.number().int().min(0),
    unreported: z.number().int().min(0),
    scarce: z.boolean().optional(),
    lastCall: z.number().int().min(0).max(1e12).optional(),
  })
  .strict();

/** What an agent carries from one workflow run to the next (schemaVersion for future changes). */
export const AgentResume = z
  .object({
    schemaVersion: z.literal(1),
    mailbox: MailboxSnapshot,
    loop: ThreadLoopState,
    operations: z.number().int().min(0),
    watch: WatchSnapshot,
    /** Operations and updates lately applied, so a retry that lands on this run takes effect once. */
    recent: RecentAnswers,
    /** The tokens the thread holds to spend (SPEC S6.4), and what it spent past them. */
    tokens: AllowanceState,
    /** SPEC S11.3: as `tokens`, the micro-dollars it holds under a budget in dollars. */
    cost: AllowanceState.optional(),
    /** Interactions resolved lately, so a repeated resolve gets the same resolution (SPEC S5.4). */
    resolutions: z.array(RememberedResolution).max(maxRememberedResolutions),
    /** SPEC S11.3: the thread's usage ledger. */
    usage: UsageLedger.optional(),
  })
  .strict();
export type AgentResume = z.infer<typeof AgentResume>;

/** What a sub-agent workflow starts with. */
export const AgentInput = z
  .object({
    /** SPEC S3.9 wire version: every workflow input of protocol v1 says 1. */
    protocolVersion: z.literal(1),
    /** The thread; once carried through continue-as-new, with its task left to `spec` (SPEC S3.10). */
    thread: AgentThread,
    /** The thread's ancestors, the root first (its capability proves them). */
    lineage: z.array(ThreadId).max(64),
    /** The run key (SPEC S3.9): secret, so only as private as this workflow's history. */
    runKey: RunKey,
    spec: AgentSpec,
    idleTimeoutMs: z.number().int().min(1),
    interactionTimeoutMs: z.number().int().min(1).default(600_000),
    /** SPEC S5.10: how long its conversation is kept after it ended (the grant's setting). */
    conversationRetentionMs: RetentionMs,
    continueAsNewAfterEvents: z.number().int().min(100).default(defaultContinueAsNewAfterEvents),
    /**
     * SPEC S6.4: tokens the root set aside for the thread as it started it, so its first model call
     * needs no round trip to the root (a model-kernel thread; otherwise none).
     */
    allowance: z.number().int().min(0).max(1e9).optional(),
    /** SPEC S11.3: the root's `usageLedger` feature, passed on to every thread (workflows/patches.ts). */
    usageLedger: z.literal(true).optional(),
    /** SPEC S6.4: the root's `callSizedAllowance` feature, passed on to every thread (workflows/patches.ts). */
    callSizedAllowance: z.literal(true).optional(),
    /** The root's `transcriptDelta` feature, passed on to every thread (workflows/patches.ts). */
    transcriptDelta: z.literal(true).optional(),
    /** SPEC S6.4: the root's `turnTokens` feature, passed on to every thread (workflows/patches.ts). */
    turnTokens: z.literal(true).optional(),
    /**
     * SPEC S11.3: the thread's subtree has a budget in dollars (its own or an ancestor's): its model calls
     * hold micro-dollars too, from `costAllowance` (set aside as it started) on. Absent before that budget.
     */
    dollarBudget: z.literal(true).optional(),
    costAllowance: z.number().int().min(0).max(1e12).optional(),
    /**
     * SPEC S11.4: the tree's approval policy as the thread has it (the newest it was given); its presence
     * turns on the one approval gate of every kernel (workflows/patches.ts).
     */
    approvalPolicy: ApprovalPolicy.optional(),
    resume: AgentResume.optional(),
  })
  .strict();
export type AgentInput = z.infer<typeof AgentInput>;
export type AgentInputShape = z.input<typeof AgentInput>;

export type { DelegationGrant };

/** A serialised KitError. */
export interface ErrorAnswer {
  kind: string;
  message: string;
  details?: unknown;
}

/**
 * What a query returns: Temporal reports a throwing query handler as an untyped error, so queries
 * answer with a value or the KitError they would have thrown.
 */
export type QueryAnswer<Value> = { ok: true; value: Value } | { ok: false; error: ErrorAnswer };

/** Runs a query's body, answering its KitError as a value. */
export function answerQuery<Value>(read: () => Value): QueryAnswer<Value> {
  try {
    return { ok: true, value: read() };
  } catch (error) {
    return { ok: false, error: errorAnswer(error) };
  }
}

/** The serialised form of a KitError (anything else becomes InvalidState). */
export function errorAnswer(error: unknown): ErrorAnswer {
  const kitError =
    error instanceof KitError
      ? error
      : new KitError(ErrorKind.InvalidState, `internal error: ${String(error)}`);
  return {
    kind: kitError.kind,
    message: kitError.message,
    ...(kitError.details === undefined ? {} : { details: kitError.details }),
  };
}

/** The KitError a serialised error stands for. */
export function fromErrorAnswer(answer: ErrorAnswer): KitError {
  return new KitError(
    isErrorKind(answer.kind) ? answer.kind : ErrorKind.InvalidState,
    answer.message,
    answer.details,
  );
}

/** The value of a query answer, or its KitError thrown. */
export function unwrapAnswer<Value>(answer: QueryAnswer<Value>): Value {
  if (answer.ok) return answer.value;
  throw fromErrorAnswer(answer.error);
}

/** A long-poll answer: changes after the caller's version; `resume` when the poll ended early (continue-as-new). */
export const ThreadChanges = z
  .object({ changes: z.array(ThreadChange), terminal: z.boolean(), resume: z.boolean() })
  .strict();
export type ThreadChanges = z.infer<typeof ThreadChanges>;

/** SPEC S3.5: what shutdown reports after attempting all cleanup. */
export const ShutdownReport = z
  .object({
    cancelled: z.array(ThreadId),
    failed: z.array(ThreadId),
    unconfirmed: z.array(ThreadId),
    completedAt: z.string(),
  })
  .strict();
export type ShutdownReport = z.infer<typeof ShutdownReport>;

/** SPEC S3.6: an uncertain spawn to resolve: the request as sent, and whether the caller already reported it failed. */
export const ReconcileRequest = z
  .object({
    request: SpawnRequest,
    remoteTarget: z.string().optional(),
    reportedFailed: z.boolean().default(false),
  })
  .strict();
export type ReconcileRequest = z.infer<typeof ReconcileRequest>;
export type ReconcileRequestInput = z.input<typeof ReconcileRequest>;

/** SPEC S3.6 answer: the committed thread, a thread closed because its request had been reported failed, or still uncertain. */
export const ReconcileResult = z.discriminatedUnion('status', [
  z.object({ status: z.literal('committed'), thread: AgentThread }).strict(),
  z.object({ status: z.literal('closed'), thread: AgentThread }).strict(),
  z.object({ status: z.literal('uncertain'), reason: z.enum(['missing', 'different']) }).strict(),
]);
export type ReconcileResult = z.infer<typeof ReconcileResult>;

/** What a root run returns when it ends. */
export const RootRunResult = z.object({ root: AgentThread, shutdown: ShutdownReport.optional() }).strict();
export type RootRunResult = z.infer<typeof RootRunResult>;

/**
 * A side effect the root run owes the tree: start a thread, close it, or answer an agent. Serializable, so effects decided while the run prepares to continue-as-new are
 * carried into the next run and performed there, in order.
 */
export const OutboxItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), threadId: ThreadId, spec: AgentSpec }).strict(),
  z.object({ type: z.literal('close'), threadId: ThreadId }).strict(),
  z.object({ type: z.literal('respond'), callerId: ThreadId, response: ControlResponse }).strict(),
]);
export type OutboxItem = z.infer<typeof OutboxItem>;

/**
 * Repeats a wait that ended early because the root run continued-as-new (`resume`), for the time that
 * is left, so callers only ever see a real outcome or a real timeout.
 */
export async function waitAcrossRuns(
  request: WaitRequest,
  once: (request: WaitRequest) => Promise<WaitResult>,
): Promise<WaitResult> {
  const deadline = Date.now() + request.timeoutMs;
  for (;;) {
    const { resume, ...result } = await once({ ...request, timeoutMs: Math.max(0, deadline - Date.now()) });
    if (!resume) return result;
  }
}
