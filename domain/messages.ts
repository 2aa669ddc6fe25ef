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
  ThreadReport,
  WaitRequest,
  WaitResult,
} from './control';
import type { ApprovalPolicy, ApprovalPolicyChange, ApprovalPolicyPush } from './approval-policy';
import type { Capability, ProofCheckAnswer, ProofCheckRequest } from './capability';
import type { InteractionResolution, ResolveInteractionRequest } from './conversation-schemas';
import type {
  AgentThread,
  TurnOutcome,
  InterAgentMessage,
  RemoteSpawnRequest,
  SendMessageRequest,
  SpawnRequest,
} from './schemas';
import { queryNameOf, updateNameOf } from './operations';
import type { RunSnapshot } from './run-state';
import type { TranscriptEntry } from './transcript';
import type { UsageLedger } from './usage';

// Wire names are stable: renaming one breaks running workflows and recorded histories. The control
// operations' names come from their table (domain/operations.ts).

/** SPEC S4.1: admit and start a sub-agent. */
export const spawnUpdate = defineUpdate<AgentThread, [Capability, SpawnRequest]>(updateNameOf('spawn'));
/** SPEC S4.2: admit and start a sub-agent on a remote target's task queue. */
export const spawnRemoteUpdate = defineUpdate<AgentThread, [Capability, RemoteSpawnRequest]>(
  updateNameOf('spawn-remote'),
);
/** A sent message as its recipient answers it: the sender has the content (SPEC S3.10: answers stay small). */
export type MessageReceipt = Omit<InterAgentMessage, 'content'>;
/**
 * SPEC S4.3: send an inter-agent message. Served by the recipient's own workflow (SPEC S3.1), which
 * numbers it: a sub-agent's, or the root run for the root.
 */
export const sendMessageUpdate = defineUpdate<MessageReceipt, [Capability, SendMessageRequest]>(
  updateNameOf('send-message'),
);
/** SPEC S3.7: drain the root's mailbox, in order and once. */
export const takeRootMessagesUpdate = defineUpdate<InterAgentMessage[], [Capability]>('take-root-messages');
/** SPEC S4.7: block until one of the threads ends a turn or is terminal, or the timeout passes. */
export const waitUpdate = defineUpdate<WaitResult, [Capability, WaitRequest]>(updateNameOf('wait'));

/** Revokes the run's delegation grant: later spawns fail with PermissionDenied. */
export const revokeGrantUpdate = defineUpdate<void, [Capability]>('revoke-grant');

/** SPEC S4.4: one thread as the caller may see it, or null. */
export const loadThreadQuery = defineQuery<QueryAnswer<AgentThread | null>, [Capability, string]>(
  queryNameOf('load-thread'),
);
/** SPEC S4.4: the caller's subtree. */
export const listThreadsQuery = defineQuery<QueryAnswer<AgentThread[]>, [Capability]>(
  queryNameOf('list-threads'),
);
/** The run's durable state (registry, counters, grant): what reopen reads (SPEC S3.3). Root capability only. */
export const runStateQuery = defineQuery<QueryAnswer<RunSnapshot>, [Capability]>('run-state');
/** How many threads a root run holds and whether it is open: no secret, for attach's error messages. */
export const runCountsQuery = defineQuery<{ threads: number; admissionOpen: boolean }, []>('run-counts');

/** Workflow → the operation's owner (SPEC S3.1): perform a control operation for the proven sender. */
export const controlRequestSignal = defineSignal<[ControlRequest]>('control-request');
/** Owner → the requesting workflow: the answer to a control request, proven by the owner. */
export const controlResponseSignal = defineSignal<[ControlResponse]>('control-response');
/** Agent → root run: a turn started or ended, or the thread reached a terminal state (proven). */
export const threadEventSignal = defineSignal<[ThreadReport]>('thread-event');

/** A thread's own view: its record, the messages it received and in which turn it consumed them. */
export interface MailboxView {
  received: (InterAgentMessage & { consumedInTurn?: number | undefined })[];
}
/** An agent's mailbox (received messages, with the turn that consumed each). */
export const mailboxQuery = defineQuery<MailboxView>('mailbox');

/** SPEC S4.6: interrupt a thread's running turn; the thread stays alive. Served by the thread's own workflow. */
export const interruptUpdate = defineUpdate<AgentInterruptReceipt, [Capability, string]>(
  updateNameOf('interrupt'),
);
/**
 * SPEC S4.6: the same as a plain signal, accepted by every agents-kit workflow for its own thread, so an
 * operator can send it from the Web UI or `temporal workflow signal --name interrupt`.
 */
export const interruptSignal = defineSignal<[]>('interrupt');
/** SPEC S4.8: end a descendant thread and its subtree as cancelled. Returns the closed threads. */
export const closeThreadUpdate = defineUpdate<AgentThread[], [Capability, string]>(updateNameOf('close'));
/** Root run → agent: stop now, as cancelled. */
export const closeThreadSignal = defineSignal<[CloseThreadRequest]>('close-thread');
/** SPEC S3.5: close admission, cancel the tree, wait for every thread, report. Idempotent. */
export const shutdownUpdate = defineUpdate<ShutdownReport, [Capability]>('shutdown');
/** SPEC S3.8: the root completes; all descendant work is closed, and the run ends with this report. */
export const completeRootUpdate = defineUpdate<ShutdownReport, [Capability]>('complete-root');
/** SPEC S3.6: resolve an uncertain spawn. */
export const reconcileUpdate = defineUpdate<ReconcileResult, [Capability, ReconcileRequest]>('reconcile');

/**
 * SPEC S4.5: long-poll a thread's changes after a version (served by the thread's own workflow), with
 * the capability of the thread or an ancestor (SPEC S3.9: a long-poll takes one of its few update slots).
 */
export const watchThreadUpdate = defineUpdate<ThreadChanges, [number, Capability]>('watch-thread');
/** SPEC S4.5: the first turn's retained outcome, or null when the thread ended without one. */
export const firstTurnUpdate = defineUpdate<TurnOutcome | null, [Capability]>('first-turn');
/**
 * SPEC S5.4: answer one of the thread's pending interactions. Served by the thread's own workflow (the
 * agent that asked, SPEC S3.1), which wakes and then settles the item in its conversation.
 */
export const resolveInteractionUpdate = defineUpdate<
  InteractionResolution,
  [Capability, ResolveInteractionRequest]
>(updateNameOf('resolve'));
/** A thread's own current record (served by the thread's own workflow). */
export const threadQuery = defineQuery<AgentThread>('thread');
/**
 * SPEC S11.3: a thread's usage ledger (its workflow answers, every run of it added up); the root run
 * answers with the tree's ledger too, from its threads' reports.
 */
export interface UsageView {
  threadId: string;
  ledger: UsageLedger;
  tree?: UsageLedger;
}
export const usageQuery = defineQuery<UsageView>('usage');
/**
 * The transcript a thread's model calls last sent under a key (workflows/transcript-sender.ts), for a
 * model activity whose worker does not keep it; null once the thread has moved on to another key.
 */
export const modelTranscriptQuery = defineQuery<TranscriptEntry[] | null, [string]>('model-transcript');
/** SPEC S10.2: which capabilities prove what they claim, for a reader without the run key (`checkProofs`). */
export const checkProofsQuery = defineQuery<ProofCheckAnswer, [ProofCheckRequest]>('check-proofs');

/**
 * SPEC S11.4: change the tree's approval policy (root capability only); answers with the new policy,
 * which every live thread gets too, its waiting approvals re-evaluated.
 */
export const setApprovalPolicyUpdate = defineUpdate<ApprovalPolicy, [Capability, ApprovalPolicyChange]>(
  'set-approval-policy',
);
/** SPEC S11.4: the tree's approval policy as the root run has it (any proven capability of the tree). */
export const approvalPolicyQuery = defineQuery<QueryAnswer<ApprovalPolicy>, [Capability]>('approval-policy');
/** Root run → a live thread: the tree's newest approval policy, proven by the root. */
export const approvalPolicySignal = defineSignal<[ApprovalPolicyPush]>('approval-policy-changed');
