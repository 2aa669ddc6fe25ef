// For tests that send junk to every handler of a tree: what a workflow says it handles, read the way any
// outside program can (Temporal's built-in metadata query, not our code), the tree they target, and
// the check that the junk harmed nothing.
import type { Client } from '@temporalio/client';
import { relatedId } from '../../domain/ids';
import { mailboxQuery } from '../../domain/messages';
import { attachRun, untilTurns } from './runs';
import { failedTasks } from './task-answers';

export interface Handlers {
  signals: string[];
  updates: string[];
  queries: string[];
}

/** Handlers every Temporal workflow has; not ours to test. */
const builtIn = (name: string) => name.startsWith('__') || name === 'TemporalWorkflowMetadata';

export async function handlersOf(client: Client, workflowId: string): Promise<Handlers> {
  const metadata = await client.workflow
    .getHandle(workflowId)
    .query<{ definition?: Record<string, { name?: string }[] | undefined> }>('__temporal_workflow_metadata');
  const names = (key: string) =>
    (metadata.definition?.[key] ?? []).map((entry) => entry.name ?? '').filter((name) => !builtIn(name));
  return {
    signals: names('signalDefinitions'),
    updates: names('updateDefinitions'),
    queries: names('queryDefinitions'),
  };
}

/**
 * The target of hostile-input tests: a root run with one sub-agent that has finished its first turn,
 * and the four workflows of the tree (the root run, the agent, the agent's and the root's conversations).
 */
export async function treeWithIdleChild(client: Client, taskQueue: string) {
  const service = await attachRun(client, taskQueue);
  const child = await service.rootControls().spawn({
    name: 'target',
    task: 'keep working',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'turn done' }]] },
  });
  await untilTurns(service, child.id, 1);
  const workflows = [
    service.rootThreadId,
    child.id,
    child.conversationId,
    relatedId('conversation', service.rootThreadId),
  ];
  return { service, child, workflows };
}

/**
 * After the junk: no workflow task of the tree failed, and the tree still works (a real message
 * triggers the agent's second turn, and is the first in its mailbox).
 */
export async function expectTreeUnharmed(
  client: Client,
  { service, child, workflows }: Awaited<ReturnType<typeof treeWithIdleChild>>,
): Promise<void> {
  // The SDK's own paging: it sizes pages by bytes, and two signals of nearly 2 MiB can lie side by side.
  for (const workflowId of workflows) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    expect([workflowId, failedTasks(history.events ?? [])]).toEqual([workflowId, []]);
  }
  const root = service.rootControls();
  const sent = await root.sendMessage({ recipient: child.id, content: 'still there?', triggerTurn: true });
  expect(sent.seq).toBe(1);
  await untilTurns(service, child.id, 2);
  const mailbox = await client.workflow.getHandle(child.id).query(mailboxQuery);
  expect(mailbox.received.map((entry) => [entry.seq, entry.content])).toEqual([[1, 'still there?']]);
  expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
}
