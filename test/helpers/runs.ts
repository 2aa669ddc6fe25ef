import type { Client } from '@temporalio/client';
import { ThreadService, type AttachOptions } from '../../client/thread-service';
import { KitError } from '../../domain/errors';
import type { AgentThread } from '../../domain/schemas';

/** Attaches a root run owned by `tests`, with a long idle timeout unless the test says otherwise. */
export function attachRun(
  client: Client,
  taskQueue: string,
  overrides: Partial<AttachOptions> = {},
): Promise<ThreadService> {
  return ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: { task: 'coordinate the test', name: 'root' },
    ...overrides,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, ...overrides.grant },
  });
}

/** The KitError a promise rejects with (fails the test when it resolves or rejects with something else). */
export async function kitErrorOf(promise: Promise<unknown>): Promise<KitError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a KitError, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof KitError)) throw outcome.error;
  return outcome.error;
}

/**
 * Polls `read` until `accept` holds (the server is eventually consistent for some reads, and a
 * just-spawned thread's workflow may not exist yet: a failing read is retried until the deadline, and
 * its last error is rethrown then).
 */
export async function eventually<Value>(
  read: () => Promise<Value>,
  accept: (value: Value) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const outcome = await read().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    if ('value' in outcome && accept(outcome.value)) return outcome.value;
    if (Date.now() > deadline) {
      if ('error' in outcome) throw outcome.error;
      throw new Error(
        `gave up waiting for ${what}; last value: ${JSON.stringify(outcome.value)?.slice(0, 2000)}`,
      );
    }
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Waits until a workflow's history holds an event its `text` names (a signal's name, say). */
export const untilHistoryHolds = (client: Client, workflowId: string, text: string) =>
  eventually(
    async () => JSON.stringify((await client.workflow.getHandle(workflowId).fetchHistory()).events),
    (events) => events.includes(text),
    `${workflowId}'s history to hold ${text}`,
  );

/** Waits until a workflow has closed; how Temporal records its end (COMPLETED, CANCELLED, …). */
export const untilClosed = (client: Client, workflowId: string) =>
  eventually(
    async () => (await client.workflow.getHandle(workflowId).describe()).status.name,
    (status) => status !== 'RUNNING',
    `${workflowId} to close`,
  );

/** Sends cheap updates (`poke`) until workflow `workflowId` has continued as new (2 minutes at most). */
export async function untilContinuedAsNew(
  client: Client,
  workflowId: string,
  poke: () => Promise<unknown>,
): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  const firstRunId = (await handle.describe()).runId;
  await eventually(
    async () => {
      await poke();
      return (await handle.describe()).runId;
    },
    (runId) => runId !== firstRunId,
    `${workflowId} to continue as new`,
    120_000,
  );
}

/** A non-blocking wait for `threadId`: a cheap update to the root run. */
export const pokeRoot = (service: ThreadService, threadId: string) => () =>
  service.rootControls().wait({ threadIds: [threadId], timeoutMs: 0 });

/**
 * Waits (through the root's wait operation) until the thread has completed `turns` turns: 30 s, or
 * `timeoutMs` for a turn of many model calls.
 */
export async function untilTurns(
  service: ThreadService,
  threadId: string,
  turns: number,
  timeoutMs?: number,
): Promise<AgentThread> {
  return eventually(
    async () => (await service.rootControls().loadThread(threadId))!,
    (thread) => thread.turnsCompleted >= turns && thread.status !== 'running',
    `${threadId} to complete ${turns} turn(s)`,
    timeoutMs,
  );
}

/** A sub-agent's spec: it answers once, then waits for messages (idle). */
export const idleAgent = (name: string) => ({
  name,
  task: 'answer once, then wait',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] },
});

/** A sub-agent that answers its first turn and, in its second, sleeps for an hour (till interrupted). */
export const sleeperAfterReady = (name: string) => ({
  name,
  task: 'answer once, then work for long',
  kernel: {
    type: 'scripted' as const,
    turns: [
      [{ type: 'reply' as const, text: 'ready' }],
      [
        { type: 'tool' as const, tool: 'sleep', input: { ms: 3_600_000 } },
        { type: 'reply' as const, text: 'worked for an hour' },
      ],
    ],
  },
});

/** A sub-agent that answers its first turn and, in its second, waits for an answer to a question. */
export const askingAgent = (name: string) => ({
  name,
  task: 'answer once, then ask',
  kernel: {
    type: 'scripted' as const,
    turns: [
      [{ type: 'reply' as const, text: 'ready' }],
      [{ type: 'ask' as const, kind: 'question' as const, prompt: 'Which one?' }],
    ],
  },
});

/**
 * A sub-agent `writer` that has answered eight turns of ~95 KB each: unread, its conversation's backlog
 * passes the default 512 KiB high-water mark, and the rest goes to page workflows.
 */
export async function writerPastHighWater(service: ThreadService): Promise<AgentThread> {
  const root = service.rootControls();
  const writer = await root.spawn({
    task: 'answer at length',
    name: 'writer',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'w'.repeat(95_000) }]] },
  });
  for (let turn = 1; turn <= 8; turn++) {
    if (turn > 1) await root.sendMessage({ recipient: writer.id, content: `go ${turn}`, triggerTurn: true });
    await untilTurns(service, writer.id, turn);
  }
  return writer;
}

/** A sub-agent `lead` whose first turn spawns `helper`; both have answered once, and wait. */
export async function leadWithHelper(
  service: ThreadService,
): Promise<{ lead: AgentThread; helper: AgentThread }> {
  const root = service.rootControls();
  const reply = { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] };
  const lead = await root.spawn({
    name: 'lead',
    task: 'delegate, then wait',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'spawn', request: { name: 'helper', task: 'answer once, then wait', kernel: reply } },
          { type: 'reply', text: 'delegated' },
        ],
      ],
    },
  });
  const threads = await eventually(
    () => root.listThreads(),
    (listed) => listed.some((thread) => thread.name === 'helper'),
    'the helper to be spawned',
  );
  const helper = threads.find((thread) => thread.name === 'helper')!;
  await untilTurns(service, lead.id, 1);
  await untilTurns(service, helper.id, 1);
  return { lead, helper };
}
