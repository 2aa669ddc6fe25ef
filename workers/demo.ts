import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { join } from 'node:path';
import { createActivities } from '../activities';
import { ThreadService } from '../client/thread-service';
import type { AgentThread, ScriptStepShape } from '../domain/schemas';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { dataDir, startDevServer } from '../scripts/temporal.cjs';
import { createAgentWorker } from './create-worker';

const say = (line: string) => console.log(`[demo] ${line}`);

/** A scripted team: a researcher and a writer report to the root, which waits for both and sums up. */
function demoRoot() {
  const worker = (name: string, steps: ScriptStepShape[]) => ({
    type: 'spawn' as const,
    as: name,
    request: { task: `the ${name}'s part`, name, kernel: { type: 'scripted' as const, turns: [steps] } },
  });
  return {
    name: 'root',
    task: 'Write a two-line brief about durable agents, with a researcher and a writer.',
    kernel: {
      type: 'scripted' as const,
      turns: [
        [
          worker('researcher', [
            { type: 'tool', tool: 'sleep', input: { ms: 300 } },
            { type: 'send', to: 'root', content: 'Temporal keeps every step in history.' },
            { type: 'reply', text: 'facts gathered' },
          ]),
          worker('writer', [
            { type: 'tool', tool: 'word_count', input: { text: 'Agents that survive crashes' } },
            { type: 'reply', text: 'draft written ({{last}} words of title)' },
          ]),
          { type: 'wait', on: ['researcher', 'writer'], timeoutMs: 30_000 },
          { type: 'wait', on: ['researcher'], timeoutMs: 30_000 },
          { type: 'wait', on: ['writer'], timeoutMs: 30_000 },
          { type: 'list' },
          { type: 'reply', text: 'Brief ready. Team: {{last}}' },
        ] satisfies ScriptStepShape[],
      ],
    },
  };
}

function printTree(threads: AgentThread[]): void {
  for (const thread of threads) {
    const result = thread.latestTurn?.result ? ` → ${thread.latestTurn.result}` : '';
    say(`${'  '.repeat(thread.depth)}${thread.path} [${thread.status}]${result}`);
  }
}

/**
 * `npm run demo`: starts the embedded Temporal dev server (SQLite file under .data/) and a worker,
 * attaches a root run whose scripted agent spawns two sub-agents, waits for them, and prints the tree.
 */
async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('starting the embedded Temporal dev server…');
  const server = await startDevServer({
    dbFile: join(dataDir, 'demo.sqlite'),
    searchAttributes: searchAttributeRegistrations,
  });
  say(`Temporal dev server on ${server.address}, Web UI at ${server.uiAddress}`);
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const taskQueue = 'agents-kit-demo';
    const worker = await createAgentWorker({
      connection: nativeConnection,
      taskQueue,
      activities: createActivities(),
    });
    say(`worker started on task queue ${taskQueue}; model: scripted (no model configured)`);
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      const service = await ThreadService.attach(client, {
        taskQueue,
        owner: 'demo',
        root: demoRoot(),
        grant: { owner: 'demo', idleTimeoutMs: 2_000 },
      });
      say(`root run ${service.rootThreadId} attached`);
      const root = await waitForFirstTurn(service);
      say(`root answered: ${root.latestTurn?.result}`);
      for (const message of await service.takeRootMessages())
        say(`message to root from ${message.sender}: ${message.content}`);
      printTree(await service.rootControls().listThreads());
      say(
        `see the run: ${server.uiAddress}/namespaces/default/workflows?query=${encodeURIComponent(`AgentRootThreadId="${service.rootThreadId}"`)}`,
      );
      await service.handle.terminate('demo finished');
    });
    say('done');
  } finally {
    await connection.close();
    await nativeConnection.close();
    await server.stop();
  }
}

async function waitForFirstTurn(service: ThreadService): Promise<AgentThread> {
  for (;;) {
    const root = (await service.rootControls().loadThread(service.rootThreadId))!;
    if (root.firstTurn) return root;
    await new Promise((done) => setTimeout(done, 200));
  }
}

main().catch((error: unknown) => {
  console.error(`[demo] failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
