/**
 * `agents-kit`: the client API a backend service uses to run trees of agents on Temporal.
 *
 * - {@link ThreadService} attaches (or reopens) a root run and hosts its control operations;
 *   {@link ThreadControls} is the scope-bound face of those operations (spawn, sendMessage, wait,
 *   list/load, interrupt, close, subscribe).
 * - {@link ConversationNotificationReceiver} reads a thread's durable notification stream;
 *   {@link resolveNotification} answers its approvals and questions.
 * - Every failure is a {@link KitError} with a {@link ErrorKind}; `KitError.is(error)` recognises one
 *   from any copy of the package.
 * - The zod schemas of everything that crosses the API, each with its inferred type of the same name.
 * - {@link grpcRetryInterceptor} is the gRPC retry to give the client's `Connection` (a call that meets a
 *   workflow at its continue-as-new is retried at once, not 1.7 s later).
 * - {@link tracingInterceptors} traces what a client does to a tree (SPEC S11.2); {@link createTracing}
 *   / {@link tracingFromEnvironment} export spans over OTLP.
 *
 * Workers live in `agents-kit/worker`; the workflow code in `agents-kit/workflows`.
 *
 * @example
 * import { ThreadService, KitError } from 'agents-kit';
 * const service = await ThreadService.attach(client, { taskQueue: 'agents-kit', owner: 'svc', root: { task: 'Plan' }, grant: { owner: 'svc' } });
 */
export { ThreadService, type AttachOptions } from './thread-service';
export type { RunCounters } from '../domain/run-turns';
export { ThreadControls } from './thread-controls';
export {
  ConversationNotificationReceiver,
  type NotificationSource,
  type OpenReceiverOptions,
  type ReceiverStep,
} from './conversation-receiver';
export {
  closeConversation,
  conversationSummary,
  publishNotification,
  publishNotifications,
  publishNotificationsWithReceipt,
  resolveNotification,
  NotificationDraftInput,
  type ConversationStartOptions,
  type InteractionTarget,
} from './conversations';
export {
  ApprovalPolicy,
  ApprovalPolicyChange,
  InitialApprovalPolicy,
  maxPolicyBytes,
  maxPolicyTools,
} from '../domain/approval-policy';
export { toKitError } from './errors';
export { watchOutput, type LiveOutputEvent, type WatchOutputOptions } from './live-output';
export {
  streamTree,
  type StreamTreeOptions,
  type TreeEvent,
  type TreeEventBody,
  type TreeReadOptions,
} from './tree-stream';
export { usageReport, type ThreadUsageLine, type UsageReport } from './usage';
export type { Usage, UsageLedger } from '../domain/usage';
export { LiveCallId, LiveCursor, LiveEnd, type LiveOutputView } from '../domain/live-output';
export { createEncryptionCodec } from './encryption-codec';
export { grpcRetryInterceptor, grpcRetryOptions } from './grpc-retry';
export {
  createTracing,
  tracingFromEnvironment,
  TracingEnvironment,
  type Tracing,
  type TracingOptions,
} from './tracing';
export { tracingInterceptors } from './trace-interceptors';
export { loadCodecKeys } from './codec-keys';
export { ErrorKind, isErrorKind, KitError } from '../domain/errors';
export {
  ConversationId,
  MessageId,
  NotificationId,
  parseId,
  RequestId,
  ThreadId,
  type IdPrefix,
} from '../domain/ids';
export {
  AgentLimits,
  AgentSpec,
  AgentThread,
  ConversationNotification,
  ControlScope,
  DelegationGrant,
  ForkMode,
  InterAgentMessage,
  KernelSpec,
  NotificationBody,
  RemoteSpawnRequest,
  RemoteTarget,
  ScriptStep,
  SendMessageRequest,
  SpawnRequest,
  ThreadName,
  ThreadStatus,
  TurnOutcome,
  isTerminal,
  type AgentSpecInput,
  type DelegationGrantInput,
  type RemoteSpawnRequestInput,
  type ScriptStepShape,
  type SendMessageRequestInput,
  type SpawnRequestInput,
} from '../domain/schemas';
export {
  AgentInterruptReceipt,
  ReconcileRequest,
  ReconcileResult,
  RootRunResult,
  ShutdownReport,
  ThreadChange,
  WaitRequest,
  WaitResult,
  type ReconcileRequestInput,
  type WaitRequestInput,
} from '../domain/control';
export {
  CloseResult,
  ConversationSummary,
  InteractionAnswer,
  InteractionResolution,
} from '../domain/conversation-schemas';
/** The plain `interrupt` signal an operator may send to a thread's workflow (SPEC S4.6). */
export { interruptSignal } from '../domain/messages';
export { searchAttributeRegistrations } from '../domain/search-attributes';
