import { z } from 'zod';
import { BudgetUsd, maxBudgetMicroUsd } from './budget-usd';
import { jsonBytes } from './bytes';
import { RunKey } from './capability';
import { ConversationId, matching, MessageId, NotificationId, RequestId, ThreadId } from './ids';
import { ToolName } from './tool-names';
import { ApprovalPolicy } from './approval-policy';

export { BudgetUsd, maxBudgetUsd, toMicroUsd } from './budget-usd';

// The allow-list rules live in their own module; re-exported so existing imports keep working.
export { allowsTool, allTools, narrowTools } from './tool-allow-list';

/** A thread's lifecycle (SPEC S4.9): pending → running ⇄ idle → completed | failed | cancelled. */
export const ThreadStatus = z.enum(['pending', 'running', 'idle', 'completed', 'failed', 'cancelled']);
export type ThreadStatus = z.infer<typeof ThreadStatus>;
export const terminalStatuses: readonly ThreadStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (status: ThreadStatus): boolean => terminalStatuses.includes(status);

/** A thread's (or remote target's) name: one segment of a canonical path. */
export const ThreadName = matching(
  /^[a-z0-9][a-z0-9_-]{0,39}$/,
  'expected 1-40 characters of a-z, 0-9, _ and -, starting with a letter or digit',
);
const text = (max: number) => z.string().min(1).max(max);

/** How much of the parent's history a spawned child starts with (never tool traffic or system prompts). */
export const ForkMode = z.discriminatedUnion('type', [
  z.object({ type: z.literal('none') }).strict(),
  z.object({ type: z.literal('full') }).strict(),
  z.object({ type: z.literal('lastTurns'), n: z.number().int().min(1).max(100) }).strict(),
]);
export type ForkMode = z.infer<typeof ForkMode>;

/** Limits a spawn may narrow (never widen) for its subtree. */
export const AgentLimits = z
  .object({
    maxDepth: z.number().int().min(0).max(64),
    maxConcurrent: z.number().int().min(1).max(10_000),
    maxTotal: z.number().int().min(1).max(1_000_000),
    budgetTokens: z.number().int().min(0),
    /**
     * SPEC S11.3: the subtree's budget in millionths of a US dollar, at the worker's price table (absent:
     * none). Whole micro-dollars, so sums carried through continue-as-new stay exact.
     */
    budgetMicroUsd: z.number().int().min(0).max(maxBudgetMicroUsd).optional(),
  })
  .strict();
export type AgentLimits = z.infer<typeof AgentLimits>;

/** One step of the deterministic scripted kernel: what a turn does, without a model. */
export const ScriptStep: z.ZodType<ScriptStepShape> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('tool'), tool: text(100), input: z.unknown().optional() }).strict(),
    z
      .object({
        type: z.literal('spawn'),
        as: ThreadName.optional(),
        request: SpawnRequest,
        remoteTarget: ThreadName.optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal('send'),
        to: z.string().min(1).max(100),
        content: text(100_000),
        triggerTurn: z.boolean().default(false),
      })
      .strict(),
    z
      .object({
        type: z.literal('wait'),
        on: z.array(z.string().min(1).max(100)).min(1).max(1000),
        timeoutMs: z.number().int().min(0).max(3_600_000).default(30_000),
      })
      .strict(),
    z.object({ type: z.literal('load'), target: z.string().min(1).max(100) }).strict(),
    z.object({ type: z.literal('list') }).strict(),
    z
      .object({ type: z.literal('ask'), kind: z.enum(['approval', 'question']), prompt: text(10_000) })
      .strict(),
    z
      .object({ type: z.literal('reply'), text: text(100_000), tokens: z.number().int().min(0).optional() })
      .strict(),
    z.object({ type: z.literal('fail'), message: text(10_000) }).strict(),
  ]),
);
/** A step as written in a script; `to` and `on` name a thread id, `parent`, `root`, `self` or a spawn label. */
export type ScriptStepShape =
  | { type: 'tool'; tool: string; input?: unknown }
  | { type: 'spawn'; as?: string | undefined; request: SpawnRequestInput; remoteTarget?: string | undefined }
  | { type: 'send'; to: string; content: string; triggerTurn?: boolean | undefined }
  | { type: 'wait'; on: string[]; timeoutMs?: number | undefined }
  | { type: 'load'; target: string }
  | { type: 'list' }
  | { type: 'ask'; kind: 'approval' | 'question'; prompt: string }
  | { type: 'reply'; text: string; tokens?: number | undefined }
  | { type: 'fail'; message: string };

/** Which kernel runs a thread's turns. The scripted kernel plays one script per turn, then repeats the last. */
export const KernelSpec = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('scripted'), turns: z.array(z.array(ScriptStep).max(1000)).min(1).max(1000) })
    .strict(),
  /** The model loop (SPEC S6.1) on the worker's configured provider; `maxSteps` bounds model calls per turn. */
  z
    .object({
      type: z.literal('model'),
      maxSteps: z.number().int().min(1).max(200).default(24),
      /** The most one model call may answer (SPEC S11.3): the provider stops there; 4,096 when unset. */
      maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
    })
    .strict(),
]);
export type KernelSpec = z.infer<typeof KernelSpec>;

export { ToolName };

/** What an agent is asked to be and do. */
export const AgentSpec = z
  .object({
    task: text(100_000),
    name: ThreadName.optional(),
    instructions: z.string().max(100_000).optional(),
    model: z.string().min(1).max(200).optional(),
    tools: z.array(ToolName).max(200).optional(),
    kernel: KernelSpec.optional(),
    /** Conversation the agent starts with (a fork of its parent's: user and assistant text only). */
    history: z
      .array(z.object({ role: z.enum(['user', 'assistant']), text: z.string().max(100_000) }).strict())
      .max(200)
      .optional(),
  })
  .strict();
export type AgentSpec = z.infer<typeof AgentSpec>;
export type AgentSpecInput = z.input<typeof AgentSpec>;

/**
 * Largest agent spec or spawn request, in UTF-8 bytes of its JSON. It travels in workflow commands and
 * state: Temporal refuses a payload over 2 MiB and a workflow task's whole answer over 4 MiB, and a
 * root run that cannot answer its task is stuck.
 */
export const maxSpecBytes = 512 * 1024;
/** A root's spec is smaller: the root's continue-as-new input also carries the whole tree's registry. */
export const maxRootSpecBytes = 256 * 1024;

/** Refines a spec-carrying schema to at most `limit` bytes of JSON; the issue names the size. */
const fitsBytes =
  (limit: number, what: string) =>
  (value: unknown, context: z.RefinementCtx): void => {
    const bytes = jsonBytes(value);
    if (bytes > limit)
      context.addIssue({
        code: 'custom',
        message: `${bytes} bytes is over the ${limit}-byte limit for ${what} (task, instructions, kernel and history together)`,
      });
  };
/** Refines a spec-carrying schema to at most {@link maxSpecBytes}. */
export const fitsSpecBytes = fitsBytes(maxSpecBytes, 'a spec');

const spawnRequestObject = AgentSpec.extend({
  requestId: RequestId.optional(),
  fork: ForkMode.default({ type: 'none' }),
  limits: AgentLimits.omit({ budgetMicroUsd: true })
    .extend({ budgetUsd: BudgetUsd })
    .partial()
    .strict()
    .optional(),
}).strict();
/** SPEC S4.1. The caller's identity is never part of the request: it comes from the scope. */
export const SpawnRequest = spawnRequestObject.superRefine(fitsSpecBytes);
export type SpawnRequest = z.infer<typeof SpawnRequest>;
export type SpawnRequestInput = z.input<typeof SpawnRequest>;

/** SPEC S4.2: a spawn onto the worker fleet of a remote target registered in the grant. */
export const RemoteSpawnRequest = spawnRequestObject
  .extend({ target: ThreadName })
  .strict()
  .superRefine(fitsSpecBytes);
export type RemoteSpawnRequest = z.infer<typeof RemoteSpawnRequest>;
export type RemoteSpawnRequestInput = z.input<typeof RemoteSpawnRequest>;

/** The result of a thread's turn. */
export const TurnOutcome = z
  .object({
    turn: z.number().int().min(1),
    status: z.enum(['completed', 'failed', 'interrupted']),
    result: z.string().optional(),
    error: z.object({ kind: z.string(), message: z.string() }).strict().optional(),
    tokens: z.number().int().min(0).default(0), // what its model calls used, in and out (S6.4)
    endedAt: z.string(),
  })
  .strict();
export type TurnOutcome = z.infer<typeof TurnOutcome>;

/** One agent of a root run as the host records it (SPEC S4.1 returns it from spawn). */
export const AgentThread = z
  .object({
    id: ThreadId,
    rootId: ThreadId,
    parentId: ThreadId.nullable(),
    conversationId: ConversationId,
    name: ThreadName,
    path: z.string(),
    depth: z.number().int().min(0),
    status: ThreadStatus,
    taskQueue: z.string(),
    remoteTarget: z.string().optional(),
    task: z.string(),
    tools: z.array(z.string()),
    turnsStarted: z.number().int().min(0),
    turnsCompleted: z.number().int().min(0),
    latestTurn: TurnOutcome.optional(),
    firstTurn: TurnOutcome.optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .strict();
export type AgentThread = z.infer<typeof AgentThread>;

/** The most one message's content takes, as JSON (every recipient's mailbox always has room for one). */
export const maxMessageBytes = 128 * 1024;

/** SPEC S4.3 request: the sender is the caller's scope, never a field here. */
export const SendMessageRequest = z
  .object({
    recipient: ThreadId,
    content: text(100_000).refine(
      (content) => jsonBytes(content) <= maxMessageBytes,
      `a message's content may take at most ${maxMessageBytes} bytes as JSON`,
    ),
    triggerTurn: z.boolean().default(false),
  })
  .strict();
export type SendMessageRequest = z.infer<typeof SendMessageRequest>;
export type SendMessageRequestInput = z.input<typeof SendMessageRequest>;

/** A delivered inter-agent message: host-assigned id, sender, per-recipient sequence and timestamp. */
export const InterAgentMessage = z
  .object({
    id: MessageId,
    sender: ThreadId,
    recipient: ThreadId,
    seq: z.number().int().min(1),
    content: z.string(),
    triggerTurn: z.boolean(),
    sentAt: z.string(),
    /** The turn that takes it, when it asks for one (a receipt's: `wait` waits for that turn). */
    turn: z.number().int().min(1).optional(),
  })
  .strict();
export type InterAgentMessage = z.infer<typeof InterAgentMessage>;

/** The longest text a notification carries: larger ones are refused (Protocol) before reaching Temporal. */
export const maxNotificationText = 100_000;
/** What a notification says (SPEC S5.1): passive `message`/`status`, or an `interaction` to answer. */
export const NotificationBody = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message'), text: z.string().max(maxNotificationText) }).strict(),
  z
    .object({
      type: z.literal('status'),
      event: z.string().min(1).max(100),
      threadId: ThreadId,
      detail: z.string().max(10_000).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('interaction'),
      requestId: RequestId,
      threadId: ThreadId,
      kind: z.enum(['approval', 'question']),
      prompt: z.string().max(10_000),
      tool: z
        .object({
          name: z.string().max(200),
          input: z
            .unknown()
            .refine(
              (input) => (JSON.stringify(input) ?? '').length <= maxNotificationText,
              'tool input too large to show',
            ),
        })
        .strict()
        .optional(),
      expiresAt: z.string().max(100).optional(),
    })
    .strict(),
]);
export type NotificationBody = z.infer<typeof NotificationBody>;

/** One item of a conversation: strictly increasing `seq` per conversation (SPEC S5.2). */
export const ConversationNotification = z
  .object({
    id: NotificationId,
    conversationId: ConversationId,
    seq: z.number().int().min(1),
    createdAt: z.string(),
    body: NotificationBody,
  })
  .strict();
export type ConversationNotification = z.infer<typeof ConversationNotification>;

/** Who is calling a control operation: set by the host, never read from a request body or model output. */
export const ControlScope = z.object({ rootId: ThreadId, threadId: ThreadId }).strict();
export type ControlScope = z.infer<typeof ControlScope>;

/** A worker fleet a root may spawn onto (SPEC S4.2), registered in the grant by name. */
export const RemoteTarget = z.object({ taskQueue: z.string().min(1).max(200) }).strict();
export type RemoteTarget = z.infer<typeof RemoteTarget>;

/** SPEC S5.10: how long a finished thread's unread conversation is kept (at most a year; 7 days). */
export const RetentionMs = z
  .number()
  .int()
  .min(1)
  .max(365 * 24 * 3_600_000)
  .default(7 * 24 * 3_600_000);

/** A time in milliseconds, at most 30 days. */
const UpTo30Days = z.number().int().min(1).max(2_592_000_000);

/** The root's delegation grant (SPEC S1, S3.2): limits and budget fixed when the root is attached. */
export const DelegationGrant = z
  .object({
    owner: z.string().min(1).max(200),
    rootThreadId: ThreadId,
    maxDepth: z.number().int().min(0).max(64).default(3),
    maxConcurrent: z.number().int().min(1).max(10_000).default(16),
    maxTotal: z.number().int().min(1).max(1_000_000).default(64),
    budgetTokens: z.number().int().min(0).default(1_000_000),
    /**
     * SPEC S11.3: a budget in US dollars for the whole tree, at the worker's price table
     * (AGENTS_KIT_MODEL_PRICES); absent: none. Model calls are held to it like tokens.
     */
    budgetUsd: BudgetUsd.optional(),
    spentTokens: z.number().int().min(0).default(0),
    idleTimeoutMs: UpTo30Days.default(3_600_000),
    interactionTimeoutMs: UpTo30Days.default(600_000),
    /**
     * SPEC S5.10: how long a thread's conversation is kept once its thread has ended, if nobody reads
     * its backlog to the end first (then it completes at once). Its history stays in the namespace.
     */
    conversationRetentionMs: RetentionMs,
    remoteTargets: z
      .record(ThreadName, RemoteTarget)
      .refine((targets) => Object.keys(targets).length <= 64, 'at most 64 remote targets')
      .default({}),
    revoked: z.boolean().default(false),
  })
  .strict();
export type DelegationGrant = z.infer<typeof DelegationGrant>;
export type DelegationGrantInput = z.input<typeof DelegationGrant>;

/** What starts a root run (SPEC S3.2). */
export const RootRunInput = z
  .object({
    /** SPEC S3.9 wire version: every workflow input of protocol v1 says 1. */
    protocolVersion: z.literal(1),
    rootThreadId: ThreadId,
    /** The run key (SPEC S3.9), made by the attaching client: secret, as private as this history. */
    runKey: RunKey,
    spec: AgentSpec.superRefine(fitsBytes(maxRootSpecBytes, "a root's spec")),
    grant: DelegationGrant,
    taskQueue: z.string().min(1).max(200),
    /** How long shutdown waits for every thread to confirm its end before reporting it unconfirmed. */
    shutdownGraceMs: z.number().int().min(1).max(3_600_000).default(60_000),
    /** Continue-as-new once a run's history has this many events (every thread of the run inherits it). */
    continueAsNewAfterEvents: z.number().int().min(100).default(4000),
    /**
     * SPEC S11.3: model calls hold a reservation before they start (workflows/patches.ts: a feature the
     * attaching client turns on for the whole tree). Absent in runs recorded before it.
     */
    usageLedger: z.literal(true).optional(),
    /**
     * SPEC S6.4: a thread's allowance refills are sized by its calls' reservations, not only the fixed
     * grant (workflows/patches.ts); absent in runs recorded before it.
     */
    callSizedAllowance: z.literal(true).optional(),
    /** Model calls carry only what their worker does not keep of the transcript (workflows/patches.ts). */
    transcriptDelta: z.literal(true).optional(),
    /** SPEC S6.4: a turn's outcome counts the tokens its model calls used (workflows/patches.ts). */
    turnTokens: z.literal(true).optional(),
    /**
     * SPEC S11.4: the tree's approval policy (the newest, once carried through continue-as-new); its
     * presence turns on the one approval gate of every kernel (workflows/patches.ts).
     */
    approvalPolicy: ApprovalPolicy.optional(),
    /**
     * SPEC S4.4: how often a run asks whether threads its earlier runs started still run (terminated from
     * outside, Temporal tells only the run that started them; workflows/outside-ends.ts `watch`).
     */
    outsideEndsCheckMs: z.number().int().min(1_000).max(86_400_000).optional(),
    /** State carried from the previous run (continue-as-new); never given by a caller. */
    resume: z.unknown().optional(),
  })
  .strict();
export type RootRunInput = z.infer<typeof RootRunInput>;
export type RootRunInputShape = z.input<typeof RootRunInput>;
