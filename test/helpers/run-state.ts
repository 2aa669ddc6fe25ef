import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { ErrorKind, KitError, parseInput } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { RootRunState, RunSnapshot } from '../../domain/run-state';
import {
  AgentThread,
  ControlScope,
  DelegationGrant,
  type InterAgentMessage,
  SendMessageRequest,
  type DelegationGrantInput,
  type SpawnRequestInput,
} from '../../domain/schemas';

export const now = '2030-01-01T00:00:00.000Z';

/** A fresh run whose grant is the defaults plus `grant`, with the root holding `tools`. */
export function newRun(
  grant: Partial<DelegationGrantInput> = {},
  options: { tools?: string[]; rootThreadId?: `thread_${string}` } = {},
): RootRunState {
  return RootRunState.create({
    grant: DelegationGrant.parse({
      owner: 'tests',
      rootThreadId: options.rootThreadId ?? newId('thread', randomUUID),
      ...grant,
    }),
    task: 'coordinate the test',
    tools: options.tools ?? ['*'],
    taskQueue: 'local',
    now,
  });
}

/** The scope of `threadId` (the root by default) in `state`'s run. */
export const scopeOf = (state: RootRunState, threadId: string = state.rootId): ControlScope => ({
  rootId: state.rootId,
  threadId: threadId as ControlScope['threadId'],
});

/** Admits a spawn by `parentId` with a fresh thread id and returns the admitted thread. */
export function spawn(
  state: RootRunState,
  parentId: string,
  request: SpawnRequestInput = { task: 'help' },
  threadId: `thread_${string}` = newId('thread', randomUUID),
): AgentThread {
  return state.admit(scopeOf(state, parentId), request, { threadId, taskQueue: 'local', now }).record.thread;
}

/** The KitError `run` throws (fails the test when it returns or throws something else). */
export function kitErrorOf(run: () => unknown): KitError {
  let value: unknown;
  try {
    value = run();
  } catch (error) {
    if (error instanceof KitError) return error;
    throw error;
  }
  throw new Error(`expected a KitError, got ${JSON.stringify(value)}`);
}

/** A detached copy of the state's snapshot as it would cross continue-as-new (JSON, then parsed). */
export const durableSnapshot = (state: RootRunState): RunSnapshot =>
  RunSnapshot.parse(JSON.parse(JSON.stringify(state.snapshot())));

/** The state a continue-as-new would resume with. */
export const restored = (state: RootRunState): RootRunState => new RootRunState(durableSnapshot(state));

/**
 * fast-check settings for domain properties: verbose, so a failure prints its seed, path and shrunk
 * counterexample; FC_SEED and FC_PATH (from that report) replay a failure exactly.
 */
export const propertyParameters = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns,
  verbose: fc.VerbosityLevel.Verbose,
  ...(process.env.FC_SEED
    ? { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) }
    : {}),
});

/**
 * A message from `scope`'s thread to the root, admitted as the root run's thread operations admit one
 * (workflows/thread-operations.ts, the same as any thread's): the registry checks sender and recipient,
 * the root's mailbox numbers it, or refuses it past its limits (QuotaExceeded).
 */
export function admitToRoot(
  state: RootRunState,
  scope: ControlScope,
  rawRequest: unknown,
  messageId: `message_${string}`,
  sentAt: string,
): InterAgentMessage {
  const request = parseInput(SendMessageRequest, rawRequest, 'message');
  if (request.recipient !== state.rootId)
    throw new KitError(
      ErrorKind.InvalidState,
      `this is the workflow of ${state.rootId}, not of ${request.recipient}: send to the recipient's own workflow`,
    );
  state.checkMessage(scope, request);
  const refusal = state.rootMailbox.refusal(state.root.path, request);
  if (refusal) throw refusal;
  return state.rootMailbox.admit({
    id: messageId,
    sender: scope.threadId,
    recipient: request.recipient,
    content: request.content,
    triggerTurn: request.triggerTurn,
    sentAt,
  });
}
