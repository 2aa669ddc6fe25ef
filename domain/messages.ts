import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type {
  AgentThread,
  ControlScope,
  InterAgentMessage,
  RemoteSpawnRequest,
  SendMessageRequest,
  SpawnRequest,
} from './schemas';

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

/** SPEC S4.4: one thread as the caller may see it, or null. */
export const loadThreadQuery = defineQuery<AgentThread | null, [ControlScope, string]>('load-thread');
/** SPEC S4.4: the caller's subtree. */
export const listThreadsQuery = defineQuery<AgentThread[], [ControlScope]>('list-threads');
