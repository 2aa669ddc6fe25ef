import { z } from 'zod';
import {
  closeAgentTool,
  interruptAgentTool,
  listAgentsTool,
  sendAgentMessageTool,
  spawnAgentTool,
  waitAgentsTool,
  type AgentToolDefinition,
} from './agent-tools';
import type { ApprovalPolicy } from './approval-policy';
import { Capability } from './capability';
import { InteractionResolution, ResolveInteractionRequest } from './conversation-schemas';
import { ThreadId } from './ids';
import { ToolName } from './tool-names';
import {
  AgentThread,
  InterAgentMessage,
  RemoteSpawnRequest,
  SendMessageRequest,
  SpawnRequest,
  ThreadStatus,
  TurnOutcome,
} from './schemas';

/** SPEC S4.7: the default time a wait blocks. */
export const defaultWaitTimeoutMs = 30_000;

/** Arguments of a wait: the threads to watch and how long to block (0 = snapshot). */
export const WaitRequest = z
  .object({
    threadIds: z.array(ThreadId).min(1).max(1000),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(24 * 3_600_000)
      .default(defaultWaitTimeoutMs),
    /**
     * A turn to wait for, by thread (a triggering message's receipt says which): such a thread counts
     * once that turn has ended, not while it is idle before it (its start may not have reached the root).
     */
    turns: z.record(ThreadId, z.number().int().min(1)).optional(),
  })
  .strict()
  .refine((request) => Object.keys(request.turns ?? {}).every((id) => (request.threadIds as string[]).includes(id)), {
    message: 'every thread of `turns` is one of `threadIds`',
    path: ['turns'],
  });
export type WaitRequest = z.infer<typeof WaitRequest>;
export type WaitRequestInput = z.input<typeof WaitRequest>;

/** SPEC S4.7 result: each thread's latest turn and status; timedOut when none ended a turn in time. */
export const WaitResult = z
  .object({
    timedOut: z.boolean(),
    /** The wait ended early because the root run continued-as-new; the client waits again. */
    resume: z.boolean().optional(),
    outcomes: z.array(
      z.object({ threadId: ThreadId, status: ThreadStatus, latestTurn: TurnOutcome.optional() }).strict(),
    ),
  })
  .strict();
export type WaitResult = z.infer<typeof WaitResult>;

/** SPEC S4.6: what an interrupt did. */
export const AgentInterruptReceipt = z
  .object({
    thread: ThreadId,
    cancellationRequested: z.boolean(),
    interruptedTurn: z.number().int().min(1).optional(),
  })
  .strict();
export type AgentInterruptReceipt = z.infer<typeof AgentInterruptReceipt>;

/** One row of {@link controlOperations}. */
interface OperationRow {
  /**
   * SPEC S3.1: who owns the operation's state, so every caller sends it straight there. `root`: the
   * root run (registry, admission, budget, shutdown). `recipient` / `target`: the workflow of the thread
   * the operation names (its mailbox, its running turn).
   */
  owner: 'root' | 'recipient' | 'target';
  /** The operation's arguments beside its `type`. */
  args: z.ZodRawShape;
  /** The model tool that performs it (SPEC S4: the same semantics for a model, a client, a workflow). */
  tool?: AgentToolDefinition;
  /** The Temporal update a client calls on the owner's workflow (its wire name; stable). */
  update?: string;
  /** The Temporal query a client reads it with instead, when it changes nothing. */
  query?: string;
  /**
   * SPEC S3.9: what a thread's workflow asks for itself (its budget), never a client: the request must
   * carry the workflow's own capability, not a delegated one (domain/capability.ts).
   */
  workflowOnly?: true;
}

const threadIdArg = { threadId: z.string() };

/**
 * SPEC S4: every control operation in one table — its owner, its arguments, the model tool and the
 * client update or query that perform it. The workflow-to-workflow union ({@link ControlOperation}),
 * the routing ({@link ownerOf}), the tools' operations and the update names all come from here, so
 * adding an operation is one row and the compiler names every place that must handle it.
 */
export const controlOperations = {
  spawn: { owner: 'root', args: { request: SpawnRequest }, tool: spawnAgentTool, update: 'spawn' },
  'spawn-remote': { owner: 'root', args: { request: RemoteSpawnRequest }, update: 'spawn-remote' },
  'send-message': {
    owner: 'recipient',
    args: { request: SendMessageRequest },
    tool: sendAgentMessageTool,
    update: 'send-message',
  },
  wait: { owner: 'root', args: { request: WaitRequest }, tool: waitAgentsTool, update: 'wait' },
  'load-thread': { owner: 'root', args: threadIdArg, query: 'load-thread' },
  'list-threads': { owner: 'root', args: {}, tool: listAgentsTool, query: 'list-threads' },
  interrupt: { owner: 'target', args: threadIdArg, tool: interruptAgentTool, update: 'interrupt' },
  /**
   * SPEC S5.4: answer one of the thread's pending interactions, at the thread that asked (its own
   * capability or an ancestor's). A client's update names the thread by the workflow it calls, so its
   * arguments are the capability and `request`; another workflow's request names it in `threadId`.
   */
  resolve: {
    owner: 'target',
    args: { threadId: z.string(), request: ResolveInteractionRequest },
    update: 'resolve-interaction',
  },
  close: { owner: 'root', args: threadIdArg, tool: closeAgentTool, update: 'close-thread' },
  /** A model call's tokens charged to the budget (a thread without an allowance). */
  charge: { owner: 'root', args: { tokens: z.number().int().min(0).max(1e12) }, workflowOnly: true },
  /** SPEC S6.4, S11.3: set tokens (or micro-dollars) aside for a thread to spend without asking per model call. */
  reserve: {
    owner: 'root',
    workflowOnly: true,
    args: {
      tokens: z.number().int().min(0).max(1e9),
      owed: z.number().int().min(0).max(1e12),
      /** Tokens spent of the thread's allowance since it last said. */
      spent: z.number().int().min(0).max(1e12),
      /**
       * SPEC S11.3: what a model call about to start still lacks: granted whole when the budgets on the
       * way up have room for it, even past the quarter an allowance is held to.
       */
      need: z.number().int().min(1).max(1e9).optional(),
      /**
       * SPEC S6.4: `need` is tokens a turn reports at once (a scripted reply's): granted whole while every
       * budget on the way up has room left, even past it, and refused (QuotaExceeded) once one is used up.
       */
      needMayPass: z.literal(true).optional(),
      /**
       * SPEC S11.3: what the amounts count: tokens (absent), or micro-dollars at the worker's price table
       * in a subtree with a budget in dollars.
       */
      unit: z.enum(['tokens', 'microUsd']).optional(),
      /** What a thread refused a call gives back of what it holds, for others to spend (workflows/patches.ts). */
      giveBack: z.number().int().min(1).max(1e12).optional(),
    },
  },
  /**
   * SPEC S11.4: a thread's interaction was approved with `remember: true` by `by`, which must be the
   * root's capability (a thread's own does not reach that far): the tree's policy remembers `tool`, and
   * answers with the policy it now has.
   */
  'remember-approval': { owner: 'root', args: { tool: ToolName, by: Capability } },
} as const satisfies Record<string, OperationRow>;

type Operations = typeof controlOperations;
export type OperationType = keyof Operations;
export const operationTypes = Object.keys(controlOperations) as OperationType[];

/** What each operation returns. */
export interface ControlResults {
  spawn: AgentThread;
  'spawn-remote': AgentThread;
  'send-message': InterAgentMessage;
  'load-thread': AgentThread | null;
  'list-threads': AgentThread[];
  wait: WaitResult;
  interrupt: AgentInterruptReceipt;
  resolve: InteractionResolution;
  close: AgentThread[];
  charge: { remaining: number };
  reserve: { granted: number; remaining: number };
  'remember-approval': ApprovalPolicy;
}

/** The schema of one operation: `{ type, ...args }`, nothing else. */
const operationSchema = <Type extends OperationType>(type: Type) =>
  z
    .object({ type: z.literal(type), ...controlOperations[type].args } as {
      type: z.ZodLiteral<Type>;
    } & Operations[Type]['args'])
    .strict();
type OperationSchema = { [Type in OperationType]: ReturnType<typeof operationSchema<Type>> }[OperationType];

/** A control operation a workflow of the tree asks the operation's owner to perform (SPEC S4). */
export const ControlOperation = z.discriminatedUnion(
  'type',
  operationTypes.map(operationSchema) as [OperationSchema, ...OperationSchema[]],
);
export type ControlOperation = z.infer<typeof ControlOperation>;
export type ControlOperationInput = z.input<typeof ControlOperation>;

/** Whether only a thread's own workflow may ask for `type` (its budget), from the table. */
export const workflowOnlyOperation = (type: OperationType): boolean =>
  (controlOperations[type] as OperationRow).workflowOnly === true;

/** Who owns each operation (SPEC S3.1), from the table. */
export const operationOwners = Object.fromEntries(
  operationTypes.map((type) => [type, controlOperations[type].owner]),
) as { [Type in OperationType]: Operations[Type]['owner'] };

/** The operations a thread's own workflow owns (SPEC S3.1: its mailbox, its running turn), from the table. */
export type ThreadOperationType = {
  [Type in OperationType]: Operations[Type]['owner'] extends 'root' ? never : Type;
}[OperationType];
export type ThreadOperation = Extract<ControlOperation, { type: ThreadOperationType }>;
/** Whether a thread's own workflow owns `operation` (the root run owns every other). */
export const isThreadOperation = (operation: ControlOperation): operation is ThreadOperation =>
  operationOwners[operation.type] !== 'root';

/** The operations a client reaches by an update on their owner's workflow, by owner, from the table. */
type UpdateRowType<Owner> = {
  [Type in OperationType]: Operations[Type] extends { update: string; owner: infer Of }
    ? Of extends Owner
      ? Type
      : never
    : never;
}[OperationType];
/** A thread's own updates (SPEC S3.1): served by the thread's workflow, the root's by the root run's. */
export type ThreadUpdateType = UpdateRowType<'recipient' | 'target'>;
/** The root run's updates from the table (registry, admission, waits). */
export type RootUpdateType = UpdateRowType<'root'>;
const updateRows = operationTypes.filter((type) => (controlOperations[type] as OperationRow).update);
export const threadUpdateTypes = updateRows.filter(
  (type) => operationOwners[type] !== 'root',
) as ThreadUpdateType[];
export const rootUpdateTypes = updateRows.filter(
  (type) => operationOwners[type] === 'root',
) as RootUpdateType[];

/** The workflow id that owns `operation` in the run of `rootId` (thread workflow ids are thread ids). */
export function ownerOf(operation: ControlOperation, rootId: ThreadId): string {
  switch (operationOwners[operation.type]) {
    case 'recipient':
      return (operation as { request: { recipient: string } }).request.recipient;
    case 'target':
      return (operation as { threadId: string }).threadId;
    case 'root':
      return rootId;
  }
}

/** The rows that have a model tool, and the tools' definitions. */
type ToolRow = Extract<Operations[OperationType], { tool: AgentToolDefinition }>;
type ToolOf<Name> = Extract<ToolRow['tool'], { name: Name }>;
/** The model's agent-control tools: exactly the table's rows' tools. */
export type AgentToolName = ToolRow['tool']['name'];

/** Each model tool, by name, with the operation it performs: derived from the table. */
export const agentTools = Object.fromEntries(
  operationTypes.flatMap((type) => {
    const row: OperationRow = controlOperations[type];
    return row.tool ? [[row.tool.name, { ...row.tool, operation: type }]] : [];
  }),
) as { [Name in AgentToolName]: ToolOf<Name> & { operation: OperationType } };
export const agentToolNames = Object.keys(agentTools) as AgentToolName[];
export const isAgentToolName = (name: string): name is AgentToolName => Object.hasOwn(agentTools, name);

/** The operation each model tool performs, from the table. */
export const toolOperations = Object.fromEntries(
  agentToolNames.map((name) => [name, agentTools[name].operation]),
) as Record<AgentToolName, OperationType>;

/** The wire name of an operation's client update (stable: renaming one breaks running workflows). */
export const updateNameOf = <Type extends OperationType>(
  type: Type,
): Operations[Type] extends { update: infer Name } ? Name : never =>
  (controlOperations[type] as OperationRow).update as never;

/** The wire name of an operation's client query. */
export const queryNameOf = <Type extends OperationType>(
  type: Type,
): Operations[Type] extends { query: infer Name } ? Name : never =>
  (controlOperations[type] as OperationRow).query as never;
