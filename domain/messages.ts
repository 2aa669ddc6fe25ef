import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  AgentInterruptReceipt,
  CloseThreadRequest,
  ControlRequest,
  ControlResponse,
  QueryAnswer,
  ReconcileRequest,
  ReconcileResult,
  ShutdownReport,
  ThreadChanges,
  ThreadEvent,
  WaitRequest,
  WaitResult,
} from './control';
import type {
  AgentThread,
  ControlScope,
  TurnOutcome,
  InterAgentMessage,
  RemoteSpawnRequest,
  SendMessageRequest,
  SpawnRequest,
} from './schemas';
import type { RunSnapshot } from './run-state';

// Wire names are stable: renaming one breaks running workflows and recorded histories.

/** SPEC S4.1: admit and start a sub-agent. */
export const spawnUpdate = defineUpdate<AgentThread, [ControlScope, SpawnRequest]>('spawn');
/** SPEC S4.2: admit and start a sub-agent on a remote target's task queue. */
export const spawnRemoteUpdate = defineUpdate<AgentThread, [ControlScope, RemoteSpawnRequest]>(
  'spawn-remote',
);
/** SPEC S4.3: send an inter-agent message. */
export const sendMessageUpdate = defineUpdate<InterAgentMessage, [ControlScope, SendMessageRequest]>(
  'send-message',
);
/** SPEC S3.7: drain the root's mailbox, in order and once. */
export const takeRootMessagesUpdate = defineUpdate<InterAgentMessage[], [ControlScope]>('take-root-messages');
/** SPEC S4.7: block until one of the threads ends a turn or is terminal, or the timeout passes. */
export const waitUpdate = defineUpdate<WaitResult, [ControlScope, WaitRequest]>('wait');

/** Revokes the run's delegation grant: later spawns fail with PermissionDenied. */
export const revokeGrantUpdate = defineUpdate<void, [ControlScope]>('revoke-grant');

/** SPEC S4.4: one thread as the caller may see it, or null. */
export const loadThreadQuery = defineQuery<QueryAnswer<AgentThread | null>, [ControlScope, string]>(
  'load-thread',
);
/** SPEC S4.4: the caller's subtree. */
export const listThreadsQuery = defineQuery<QueryAnswer<AgentThread[]>, [ControlScope]>('list-threads');
/** The run's durable state (registry, counters, grant): what reopen reads (SPEC S3.3). */
export const runStateQuery = defineQuery<RunSnapshot>('run-state');

/** Agent → root run: perform a control operation on behalf of the sending thread. */
export const controlRequestSignal = defineSignal<[ControlRequest]>('control-request');
/** Root run → agent: the answer to a control request. */
export const controlResponseSignal = defineSignal<[ControlResponse]>('control-response');
/** Agent → root run: a turn started or ended, or the thread reached a terminal state. */
export const threadEventSignal = defineSignal<[ThreadEvent]>('thread-event');
/** Root run → agent: an inter-agent message, in per-recipient sequence order (reordered by the recipient). */
export const deliverMessageSignal = defineSignal<[InterAgentMessage]>('deliver-message');

/** A thread's own view: its record, the messages it received and in which turn it consumed them. */
export interface MailboxView {
  received: (InterAgentMessage & { consumedInTurn?: number | undefined })[];
}
/** An agent's mailbox (received messages, with the turn that consumed each). */
export const mailboxQuery = defineQuery<MailboxView>('mailbox');

/** SPEC S4.6: interrupt a thread's running turn; the thread stays alive. Root-run update with a receipt. */
export const interruptUpdate = defineUpdate<AgentInterruptReceipt, [ControlScope, string]>('interrupt');
/**
 * SPEC S4.6: the same as a plain signal, accepted by every agents-kit workflow for its own thread, so an
 * operator can send it from the Web UI or `temporal workflow signal --name interrupt`.
 */
export const interruptSignal = defineSignal<[]>('interrupt');
/** SPEC S4.8: end a descendant thread and its subtree as cancelled. Returns the closed threads. */
export const closeThreadUpdate = defineUpdate<AgentThread[], [ControlScope, string]>('close-thread');
/** Root run → agent: stop now, as cancelled. */
export const closeThreadSignal = defineSignal<[CloseThreadRequest]>('close-thread');
/** SPEC S3.5: close admission, cancel the tree, wait for every thread, report. Idempotent. */
export const shutdownUpdate = defineUpdate<ShutdownReport, [ControlScope]>('shutdown');
/** SPEC S3.8: the root completes; all descendant work is closed, and the run ends with this report. */
export const completeRootUpdate = defineUpdate<ShutdownReport, [ControlScope]>('complete-root');
/** SPEC S3.6: resolve an uncertain spawn. */
export const reconcileUpdate = defineUpdate<ReconcileResult, [ControlScope, ReconcileRequest]>('reconcile');

/** SPEC S4.5: long-poll a thread's changes after a version (served by the thread's own workflow). */
export const watchThreadUpdate = defineUpdate<ThreadChanges, [number]>('watch-thread');
/** SPEC S4.5: the first turn's retained outcome, or null when the thread ended without one. */
export const firstTurnUpdate = defineUpdate<TurnOutcome | null, []>('first-turn');
/** A thread's own current record (served by the thread's own workflow). */
export const threadQuery = defineQuery<AgentThread>('thread');
