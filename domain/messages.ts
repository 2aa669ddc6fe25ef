import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ControlRequest,
  ControlResponse,
  QueryAnswer,
  ThreadEvent,
  WaitRequest,
  WaitResult,
} from './control';
import type {
  AgentThread,
  ControlScope,
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
  received: (InterAgentMessage & { consumedInTurn?: number })[];
}
/** An agent's mailbox (received messages, with the turn that consumed each). */
export const mailboxQuery = defineQuery<MailboxView>('mailbox');
