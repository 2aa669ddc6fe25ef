import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { parseInput } from '../domain/errors';
import { relatedId } from '../domain/ids';
import { listThreadsQuery, loadThreadQuery, spawnUpdate } from '../domain/messages';
import { AgentThread, ControlScope, RootRunInput, SpawnRequest } from '../domain/schemas';
import { asFailure, guarded } from './failures';

/** Hosts one root run (SPEC S3.1): its registry, grant and counters live here and nowhere else. */
export async function rootRunWorkflow(rawInput: RootRunInput): Promise<AgentThread> {
  let input: RootRunInput;
  try {
    input = parseInput(RootRunInput, rawInput, 'root run input');
  } catch (error) {
    throw asFailure(error);
  }
  const now = new Date().toISOString();
  const root: AgentThread = {
    id: input.rootThreadId,
    rootId: input.rootThreadId,
    parentId: null,
    conversationId: relatedId('conversation', input.rootThreadId),
    name: input.spec.name ?? 'root',
    path: '/root',
    depth: 0,
    status: 'running',
    taskQueue: workflowInfo().taskQueue,
    task: input.spec.task,
    tools: input.spec.tools ?? [],
    turnsStarted: 0,
    turnsCompleted: 0,
    createdAt: now,
    updatedAt: now,
  };
  setHandler(loadThreadQuery, (_scope, threadId) => (threadId === root.id ? root : null));
  setHandler(listThreadsQuery, () => [root]);
  setHandler(
    spawnUpdate,
    guarded(async (): Promise<AgentThread> => {
      throw new Error('spawn arrives with the root-run issue');
    }),
    {
      validator: guarded((scope: ControlScope, request: SpawnRequest) => {
        parseInput(ControlScope, scope, 'scope');
        parseInput(SpawnRequest, request, 'spawn request');
      }),
    },
  );
  await condition(() => false);
  return root;
}
