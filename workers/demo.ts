import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { createActivities, createModelProvider, loadModelConfig } from '../activities';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import { resolveNotification } from '../client/conversations';
import { ThreadService } from '../client/thread-service';
import type { AgentThread, ConversationNotification } from '../domain/schemas';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { dataDir, startDevServer } from '../scripts/temporal.cjs';
import { createAgentWorker } from './create-worker';

const say = (line: string) => console.log(`[demo] ${line}`);

/** Approve interactions at a terminal prompt, or automatically with --yes or without a terminal. */
async function decide(notification: ConversationNotification, interactive: boolean): Promise<boolean> {
  if (notification.body.type !== 'interaction') return true;
  const { prompt, tool } = notification.body;
  const what = tool ? `${prompt} (${tool.name} ${JSON.stringify(tool.input)})` : prompt;
  if (!interactive) {
    say(`approval requested: ${what} → approved automatically (--yes or no terminal)`);
    return true;
  }
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const reply = await terminal.question(`[demo] approval requested: ${what}\n[demo] approve? [y/N] `);
    return /^y(es)?$/i.test(reply.trim());
  } finally {
    terminal.close();
  }
}

function describe(notification: ConversationNotification): string {
  const body = notification.body;
  switch (body.type) {
    case 'message':
      return `message: ${body.text}`;
    case 'status':
      return `status: ${body.event}${body.detail ? ` (${body.detail})` : ''}`;
    case 'interaction':
      return `interaction: ${body.kind} — ${body.prompt}`;
  }
}

function printTree(threads: AgentThread[]): void {
  for (const thread of threads) {
    const result = thread.latestTurn?.result ? ` → ${thread.latestTurn.result.replaceAll('\n', ' | ')}` : '';
    say(`${'  '.repeat(thread.depth)}${thread.path} [${thread.status}]${result}`);
  }
}

/**
 * `npm run demo`: the embedded Temporal dev server (SQLite file under .data/) and a worker; a root run
 * whose agent delegates to a researcher and a writer; the root conversation streamed; the writer's
 * publish approved at the prompt (or automatically); the tree, results and Web UI address printed.
 */
async function main(): Promise<void> {
  const interactive = process.stdin.isTTY === true && !process.argv.includes('--yes');
  const modelConfig = loadModelConfig();
  const model = createModelProvider(modelConfig);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('starting the embedded Temporal dev server…');
  // A fresh database per demo: workflows left by an older checkout would replay against changed code.
  const dbFile = join(dataDir, 'demo.sqlite');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true });
  const server = await startDevServer({ dbFile, searchAttributes: searchAttributeRegistrations });
  say(`Temporal dev server on ${server.address}, Web UI at ${server.uiAddress}`);
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const taskQueue = 'agents-kit-demo';
    const worker = await createAgentWorker({
      connection: nativeConnection,
      taskQueue,
      activities: createActivities({ model }),
    });
    say(
      model.scripted
        ? 'model: SCRIPTED (built-in deterministic model; set AGENTS_KIT_MODEL_PROVIDER to use a real one)'
        : `model: ${model.name}:${model.defaultModel}`,
    );
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      const service = await ThreadService.attach(client, {
        taskQueue,
        owner: 'demo',
        root: {
          name: 'root',
          task: 'Write a two-line brief on why durable execution matters for AI agents.',
          kernel: { type: 'model' },
        },
        grant: { owner: 'demo', maxDepth: 2, maxConcurrent: 8, maxTotal: 16 },
      });
      say(`root run ${service.rootThreadId} attached; streaming the root conversation`);
      const root = await service.refreshRoot();
      await using receiver = await ConversationNotificationReceiver.open(client, root.conversationId, {
        taskQueue,
      });
      const firstTurn = service.rootControls().subscribeFirstTurn(service.rootThreadId);
      let finished = false;
      void firstTurn.finally(() => (finished = true));
      while (!finished) {
        const item = await Promise.race([receiver.recv(), firstTurn.then(() => null)]);
        if (!item) break;
        say(`#${item.seq} ${describe(item)}`);
        if (item.body.type === 'interaction') {
          const approved = await decide(item, interactive);
          await resolveNotification(client, item, {
            type: 'approval',
            approved,
            ...(approved ? {} : { reason: 'declined at the demo prompt' }),
          });
          say(approved ? 'approved' : 'denied');
        }
      }
      const outcome = await firstTurn;
      say(`root answered (${outcome.status}):`);
      for (const line of (outcome.result ?? outcome.error?.message ?? '').split('\n')) say(`  ${line}`);
      say('thread tree:');
      printTree(await service.rootControls().listThreads());
      say(
        `Web UI, this run's workflows: ${server.uiAddress}/namespaces/default/workflows?query=${encodeURIComponent(`AgentRootThreadId="${service.rootThreadId}"`)}`,
      );
      const report = await service.shutdown();
      say(
        `shut down: ${report.cancelled.length} sub-agents closed, ${report.failed.length} failed, ${report.unconfirmed.length} unconfirmed`,
      );
    });
    say('done');
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`[demo] failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
