import { z } from 'zod';
import { ErrorKind, isErrorKind, KitError } from './errors';
import { ThreadId } from './ids';
import {
  AgentSpec,
  AgentThread,
  DelegationGrant,
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
  })
  .strict();
export type WaitRequest = z.infer<typeof WaitRequest>;
export type WaitRequestInput = z.input<typeof WaitRequest>;

/** SPEC S4.7 result: each thread's latest turn and status; timedOut when none ended a turn in time. */
export const WaitResult = z
  .object({
    timedOut: z.boolean(),
    outcomes: z.array(
      z.object({ threadId: ThreadId, status: ThreadStatus, latestTurn: TurnOutcome.optional() }).strict(),
    ),
  })
  .strict();
export type WaitResult = z.infer<typeof WaitResult>;

/** A control operation an agent inside the tree asks its root run to perform (SPEC S4). */
export const ControlOperation = z.discriminatedUnion('type', [
  z.object({ type: z.literal('spawn'), request: SpawnRequest }).strict(),
  z.object({ type: z.literal('spawn-remote'), request: RemoteSpawnRequest }).strict(),
  z.object({ type: z.literal('send-message'), request: SendMessageRequest }).strict(),
  z.object({ type: z.literal('load-thread'), threadId: z.string() }).strict(),
  z.object({ type: z.literal('list-threads') }).strict(),
  z.object({ type: z.literal('wait'), request: WaitRequest }).strict(),
]);
export type ControlOperation = z.infer<typeof ControlOperation>;
export type ControlOperationInput = z.input<typeof ControlOperation>;

/** What each operation returns. */
export interface ControlResults {
  spawn: AgentThread;
  'spawn-remote': AgentThread;
  'send-message': InterAgentMessage;
  'load-thread': AgentThread | null;
  'list-threads': AgentThread[];
  wait: WaitResult;
}

/** An agent's request to the root run. The caller is the sending workflow's own thread id, set by workflow code. */
export const ControlRequest = z
  .object({ callerId: ThreadId, operationId: z.string().min(1).max(200), operation: ControlOperation })
  .strict();
export type ControlRequest = z.infer<typeof ControlRequest>;

/** The root run's answer to a ControlRequest. */
export const ControlResponse = z
  .object({
    operationId: z.string(),
    result: z.unknown().optional(),
    error: z
      .object({ kind: z.string(), message: z.string(), details: z.unknown().optional() })
      .strict()
      .optional(),
  })
  .strict();
export type ControlResponse = z.infer<typeof ControlResponse>;

/** What an agent workflow reports to its root run about itself. */
export const ThreadEvent = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('turn-start'),
      threadId: ThreadId,
      turn: z.number().int().min(1),
      at: z.string(),
    })
    .strict(),
  z
    .object({
      type: z.literal('turn-end'),
      threadId: ThreadId,
      outcome: TurnOutcome,
      nextStatus: z.enum(['idle', 'running']),
    })
    .strict(),
  z
    .object({ type: z.literal('thread-end'), threadId: ThreadId, status: ThreadStatus, at: z.string() })
    .strict(),
]);
export type ThreadEvent = z.infer<typeof ThreadEvent>;

/** What a sub-agent workflow starts with. */
export const AgentInput = z
  .object({
    thread: AgentThread,
    spec: AgentSpec,
    idleTimeoutMs: z.number().int().min(1),
  })
  .strict();
export type AgentInput = z.infer<typeof AgentInput>;

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
