// `npx tsx scripts/record-histories.ts`: records the golden histories of protocol v1, every workflow
// type (SPEC S7.4). Starts its own dev server on a fresh database, runs scenarios that cover
// continue-as-new, accepted and rejected updates, interrupts, interactions and paging, and writes every
// workflow run's history to test/fixtures/histories/v1-<name>.json; test/workflows/replay.test.ts
// replays them all. Recorded once, at the v1 clean break: from v1 on, a workflow change that breaks
// replay of these files is patched (workflows/patches.ts), never re-recorded. `--add <patch id>` and
// each flag of scripts/record-beside.ts (`--live`, `--approval`, `--cancel`, `--earlier-ends`, …) add
// runs beside them.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../activities';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import {
  closeConversation,
  publishNotifications,
  publishNotificationsWithReceipt,
  resolveNotification,
} from '../client/conversations';
import { attachRecorder } from './record-attach';
import { ErrorKind, KitError } from '../domain/errors';
import { newId, relatedId } from '../domain/ids';
import { sendMessageUpdate } from '../domain/messages';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import type { ConversationNotification, SpawnRequestInput } from '../domain/schemas';
import { createAgentWorker } from '../workers/create-worker';
import { startDevServer, defaultDataDir } from '../workers/dev-server';
import { takesPatch, writeHistories } from './write-histories';
import { chosenRecording } from './record-beside';
import { liveOutputModel } from './record-live-output';
import { budgetPrices } from './record-budgets';
import { slowTool } from '../test/helpers/tools';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

/** The error kind a call fails with (the scenario expects a failure: a rejected update). */
async function rejectionOf(what: string, call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    const kind = error instanceof KitError ? error.kind : `raw ${String(error)}`;
    log(`${what}: rejected as ${kind}`);
    return kind;
  }
  throw new Error(`${what} was expected to be rejected`);
}

async function until<Value>(read: () => Promise<Value>, accept: (value: Value) => boolean, what: string) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`gave up waiting for ${what}; last: ${JSON.stringify(value)?.slice(0, 1_000)}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** A root run: a tree with messages, triggered turns, an interrupt, an interaction, rejected updates, CAN. */
async function recordRootRun(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'coordinate the recording',
      name: 'root',
      kernel: {
        type: 'scripted',
        turns: [[{ type: 'reply', text: 'root ready' }], [{ type: 'reply', text: 'root saw {{inbox}}' }]],
      },
    },
    grant: { idleTimeoutMs: 600_000, maxTotal: 10 },
    // The minimum: the root and its agents continue as new several times in this scenario.
    continueAsNewAfterEvents: 100,
  });
  const root = service.rootControls();
  const requestId = newId('request', randomUUID);
  const talkerRequest = {
    requestId,
    task: 'talk to a grandchild',
    name: 'talker',
    kernel: {
      type: 'scripted',
      turns: [
        [
          {
            type: 'spawn',
            as: 'gc',
            request: {
              task: 'answer the talker',
              name: 'gc',
              kernel: {
                type: 'scripted',
                turns: [
                  [{ type: 'reply', text: 'gc ready' }],
                  [
                    { type: 'send', to: 'parent', content: 'gc got {{inbox}}' },
                    { type: 'reply', text: 'gc answered' },
                  ],
                ],
              },
            },
          },
          { type: 'send', to: 'gc', content: 'hello gc', triggerTurn: true },
          { type: 'reply', text: 'talker ready' },
        ],
        [
          { type: 'send', to: 'root', content: 'talker got {{inbox}}' },
          { type: 'reply', text: 'talker: {{inbox}}' },
        ],
      ],
    },
  } satisfies SpawnRequestInput;
  const talker = await root.spawn(talkerRequest);
  // The same request id again returns the same thread; with a different body it is a Conflict.
  const again = await root.spawn(talkerRequest);
  if (again.id !== talker.id) throw new Error('an idempotent spawn returned another thread');
  await rejectionOf(
    'spawn with a reused request id and another body',
    root.spawn({ requestId, task: 'something else' }),
  );
  await rejectionOf(
    'message to a forged thread id',
    root.sendMessage({ recipient: newId('thread', randomUUID), content: 'anyone?' }),
  );
  // A malformed payload sent past the client's checks: the workflow's validator rejects it.
  await rejectionOf(
    'malformed send-message update',
    service.handle
      .executeUpdate(sendMessageUpdate, {
        args: [service.rootCapability, { recipient: 'nope' } as never],
      })
      .catch((error: unknown) => {
        throw new KitError(ErrorKind.Protocol, String(error));
      }),
  );

  const asker = await root.spawn({
    task: 'ask a person',
    name: 'asker',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'may I deploy?' },
          { type: 'reply', text: 'asker: {{last}}' },
        ],
      ],
    },
  });
  const sleeper = await root.spawn({
    task: 'work slowly',
    name: 'sleeper',
    tools: ['slow'],
    kernel: {
      type: 'scripted',
      turns: [
        [{ type: 'tool', tool: 'slow', input: { ms: 120_000, label: 'sleeper' } }],
        [{ type: 'reply', text: 'awake' }],
      ],
    },
  });

  // Messages until the root and the talker have continued as new a few times.
  for (let index = 0; index < 40; index++) {
    await root.sendMessage({ recipient: talker.id, content: `m${index}`, triggerTurn: index % 8 === 7 });
  }

  // Root updates (each a few events) so the root run continues as new too: messages to the talker go
  // to the talker's own workflow, and the root's history grows only by what the tree reports.
  for (let index = 0; index < 16; index++) await service.takeRootMessages();

  // The interrupt: wait until the slow tool runs, then cancel the turn.
  await until(
    () => root.loadThread(sleeper.id),
    (thread) => thread?.status === 'running',
    'sleeper running',
  );
  await new Promise((done) => setTimeout(done, 1500));
  const receipt = await root.interrupt(sleeper.id);
  log(`interrupt: ${JSON.stringify(receipt)}`);
  await until(
    () => root.loadThread(sleeper.id),
    (thread) => thread?.latestTurn?.status === 'interrupted',
    'interrupted',
  );
  await root.sendMessage({ recipient: sleeper.id, content: 'wake up', triggerTurn: true });

  // The interaction: answered in the root's conversation, where it is mirrored (S5.9).
  const receiver = await ConversationNotificationReceiver.open(
    client,
    relatedId('conversation', service.rootThreadId),
    {
      taskQueue,
      capability: service.rootCapability,
      pollWaitMs: 2000,
    },
  );
  let interaction: ConversationNotification | null = null;
  while (!interaction) {
    const notification = await receiver.recv();
    if (!notification) throw new Error('root conversation ended');
    if (notification.body.type === 'interaction') interaction = notification;
  }
  const asRoot = { capability: service.rootCapability, name: 'recorder' };
  await resolveNotification(
    client,
    interaction,
    { type: 'approval', approved: true, reason: 'recorded' },
    asRoot,
  );
  await rejectionOf(
    'a different answer to a resolved interaction',
    resolveNotification(client, interaction, { type: 'approval', approved: false }, asRoot),
  );
  await receiver[Symbol.asyncDispose]();
  await until(
    () => root.loadThread(asker.id),
    (thread) => (thread?.turnsCompleted ?? 0) >= 1,
    'asker answered',
  );
  // Triggers that arrive while a turn runs ask for one more turn together (the talker's turns wait on
  // the root), so at least the first turn and two triggered ones.
  await until(
    () => root.loadThread(talker.id),
    (thread) => (thread?.turnsCompleted ?? 0) >= 3,
    'talker turns',
  );
  log(`root messages: ${(await service.takeRootMessages()).length}`);
  const report = await service.shutdown();
  log(`shutdown: ${report.cancelled.length} cancelled, ${report.failed.length} failed`);
  await rejectionOf('spawn after shutdown', root.spawn({ task: 'too late' }));
}

/** A standalone conversation that continues as new often, with receipts, a receiver, an answer and close. */
async function recordConversation(client: Client, taskQueue: string): Promise<void> {
  const threadId = newId('thread', randomUUID);
  const conversationId = relatedId('conversation', threadId);
  const options = {
    taskQueue,
    settings: { continueAsNewAfterEvents: 40, continueAsNewAfterUpdates: 6, receiveWaitMs: 2000 },
  };
  for (let batch = 0; batch < 6; batch++) {
    await publishNotifications(
      client,
      conversationId,
      Array.from({ length: 5 }, (_, index) => ({
        body: { type: 'message' as const, text: `n${batch}.${index}` },
      })),
      options,
    );
  }
  const interaction = {
    type: 'interaction' as const,
    requestId: newId('request', randomUUID),
    threadId,
    kind: 'question' as const,
    prompt: 'which branch?',
  };
  await publishNotificationsWithReceipt(client, conversationId, [{ body: interaction }], options);
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, {
    ...options,
    pollWaitMs: 1000,
  });
  for (let received = 0; received < 31; received++) await receiver.recv();
  // Long-polls that wait: three answered by a publish, and one that first ends empty at its deadline.
  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
  for (const [text, waitMs] of [
    ['w1', 200],
    ['w2', 200],
    ['w3', 200],
    ['w4', 1500],
  ] as const) {
    const waiting = receiver.recv();
    await pause(waitMs);
    await publishNotifications(client, conversationId, [{ body: { type: 'message', text } }], options);
    await waiting;
  }
  await rejectionOf(
    'an answer of the wrong kind',
    resolveNotification(client, { body: interaction }, { type: 'approval', approved: true }),
  );
  await resolveNotification(client, { body: interaction }, { type: 'question', text: 'main' });
  await rejectionOf(
    'a second receiver while the lease is held',
    ConversationNotificationReceiver.open(client, conversationId, options),
  );
  await receiver[Symbol.asyncDispose]();
  await closeConversation(client, conversationId);
  await rejectionOf(
    'publish after close',
    publishNotificationsWithReceipt(
      client,
      conversationId,
      [{ body: { type: 'message', text: 'late' } }],
      options,
    ),
  );
}

/**
 * A conversation that pages its backlog (small high-water mark and pages): 120 notifications with
 * nobody receiving, so several page workflows start; a receiver then reads all, which asks the pages
 * back; an interaction held behind the pages is resolved before it is received.
 */
async function recordPagedConversation(client: Client, taskQueue: string): Promise<void> {
  const threadId = newId('thread', randomUUID);
  const conversationId = relatedId('conversation', threadId);
  const options = {
    taskQueue,
    settings: {
      continueAsNewAfterEvents: 60,
      backlogHighWaterBytes: 2 * 1024,
      pageBytes: 1024,
      receiveWaitMs: 2000,
    },
  };
  const interaction = {
    type: 'interaction' as const,
    requestId: newId('request', randomUUID),
    threadId,
    kind: 'question' as const,
    prompt: 'paged question?',
  };
  for (let batch = 0; batch < 12; batch++) {
    await publishNotifications(
      client,
      conversationId,
      Array.from({ length: 10 }, (_, index) => ({
        body: { type: 'message' as const, text: `page ${batch}.${index} ${'x'.repeat(60)}` },
      })),
      options,
    );
    if (batch === 6)
      await publishNotificationsWithReceipt(client, conversationId, [{ body: interaction }], options);
  }
  await resolveNotification(client, { body: interaction }, { type: 'question', text: 'yes' });
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, {
    ...options,
    pollWaitMs: 1000,
  });
  for (let received = 0; received < 120; received++) await receiver.recv();
  await receiver[Symbol.asyncDispose]();
}

async function main(): Promise<void> {
  const runDir = join(defaultDataDir(), `record-${process.pid}`);
  const server = await startDevServer({
    dbFile: join(runDir, 'temporal.sqlite'),
    headless: true,
    searchAttributes: searchAttributeRegistrations,
  });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const taskQueue = 'record-histories';
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  try {
    const model = liveOutputModel();
    worker = await createAgentWorker({
      connection: nativeConnection,
      taskQueue,
      // The model the live-output and budget scenarios' threads call: the scripted one, streaming
      // slowly, at the budget scenario's prices (no other scenario calls a model).
      activities: createActivities({ tools: [slowTool().tool], model, prices: budgetPrices(model) }),
    });
    running = worker.run();
    const { scenario, added } = chosenRecording(process.argv);
    for (const record of scenario
      ? [scenario.record]
      : [recordRootRun, recordConversation, recordPagedConversation])
      await record(client, taskQueue);
    // Visibility is eventually consistent: let it list the last runs.
    await new Promise((done) => setTimeout(done, 2000));
    if (scenario) await writeHistories(client, scenario.prefix, scenario.selection);
    else if (added) await writeHistories(client, added, { takes: takesPatch(added) });
    else await writeHistories(client, 'v1');
  } finally {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await nativeConnection.close();
    await connection.close();
    await server.stop();
    rmSync(runDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  if (error instanceof Error && error.cause)
    log(`cause: ${String(error.cause)} ${String((error.cause as Error).cause ?? '')}`);
  process.exit(1);
});
