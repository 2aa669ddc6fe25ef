import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createActivities, createModelProvider, loadModelConfig } from '../activities';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import { ThreadService } from '../client/thread-service';
import type { AgentThread } from '../domain/schemas';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { startDevServer, defaultDataDir } from './dev-server';
import { approvalPolicy, describeApprovals, streamConversation } from './cli/approvals';
import { createAgentWorker } from './create-worker';
import { LivePrinter } from './cli/live-printer';

const say = (line: string) => console.log(`[demo] ${line}`);

function printTree(threads: AgentThread[]): void {
  for (const thread of threads) {
    const result = thread.latestTurn?.result ? ` → ${thread.latestTurn.result.replaceAll('\n', ' | ')}` : '';
    say(`${'  '.repeat(thread.depth)}${thread.path} [${thread.status}]${result}`);
  }
}

/** Resolves when the user presses Enter (or Ctrl-C, or stdin ends). */
async function untilEnter(): Promise<void> {
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    await new Promise<void>((done) => {
      for (const event of ['line', 'SIGINT', 'close']) terminal.once(event, () => done());
    });
  } finally {
    terminal.close();
  }
}

/**
 * `npm run demo`: the embedded Temporal dev server (SQLite file under .agents-kit/) and a worker; a root run
 * whose agent delegates to a researcher and a writer; the root conversation streamed; the writer's
 * publish approved at the prompt (automatically with --yes or without a terminal); the tree, results
 * and Web UI address printed. At a terminal the Web UI stays up until Enter; then the run is shut down.
 */
async function main(): Promise<void> {
  const policy = approvalPolicy(process.argv.includes('--yes'), 'approve');
  const interactive = policy.mode === 'ask';
  // The scripted model writes a word every 25 ms here, so its output is seen streaming (SPEC S10.1).
  const modelConfig = loadModelConfig({ AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: '25', ...process.env });
  const model = createModelProvider(modelConfig);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('starting the embedded Temporal dev server…');
  // A fresh database per demo: workflows left by an older checkout would replay against changed code.
  const dbFile = join(defaultDataDir(), 'demo.sqlite');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true });
  const server = await startDevServer({ dbFile, searchAttributes: searchAttributeRegistrations });
  say(`Temporal dev server on ${server.address}, Web UI at ${server.uiAddress}`);
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({
    address: server.address,
    interceptors: [grpcRetryInterceptor()],
  });
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
      say(
        `root run ${service.rootThreadId} attached; streaming the root conversation and the agents' output`,
      );
      say(describeApprovals(policy));
      const root = await service.refreshRoot();
      const stop = new AbortController();
      // Each agent's text as its model writes it, beside the root conversation's lines.
      const printer = new LivePrinter(
        service,
        { write: (text) => process.stdout.write(text), note: say },
        stop.signal,
      );
      printer.follow(service.rootThreadId, root.path);
      const streaming = streamConversation({
        capability: service.rootCapability,
        client,
        conversationId: root.conversationId,
        taskQueue,
        policy,
        say: (line) => printer.line(line),
        signal: stop.signal,
        onHandled: (item) => printer.noticed(item),
      });
      const outcome = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
      stop.abort();
      await streaming;
      await printer.stop();
      say(`root answered (${outcome.status}):`);
      for (const line of (outcome.result ?? outcome.error?.message ?? '').split('\n')) say(`  ${line}`);
      say('thread tree:');
      printTree(await service.rootControls().listThreads());
      say(
        `Web UI, this run's workflows: ${server.uiAddress}/namespaces/default/workflows?query=${encodeURIComponent(`AgentRootThreadId="${service.rootThreadId}"`)}`,
      );
      if (interactive) {
        say('Web UI stays up: press Enter to shut down and exit');
        await untilEnter();
      }
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
