import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { newId } from '../domain/ids';
import { loadThreadQuery } from '../domain/messages';
import { DelegationGrant } from '../domain/schemas';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { dataDir, startDevServer } from '../scripts/temporal.cjs';
import { createActivities } from '../activities';
import { createAgentWorker } from './create-worker';

const say = (line: string) => console.log(`[demo] ${line}`);

/**
 * `npm run demo`. For now it proves the stack: it starts the embedded Temporal dev server (SQLite file
 * under .data/) and a worker, attaches a root run, reads it back and shuts everything down. The
 * multi-agent demo replaces this once sub-agents land.
 */
async function main(): Promise<void> {
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
    say(`worker started on task queue ${taskQueue}`);
    await worker.runUntil(async () => {
      const client = new Client({ connection });
      const rootThreadId = newId('thread', randomUUID);
      const handle = await client.workflow.start('rootRunWorkflow', {
        taskQueue,
        workflowId: rootThreadId,
        args: [
          {
            rootThreadId,
            taskQueue,
            spec: { task: 'demo', name: 'root' },
            grant: DelegationGrant.parse({ owner: 'demo', rootThreadId }),
          },
        ],
      });
      const root = await handle.query(
        loadThreadQuery,
        { rootId: rootThreadId, threadId: rootThreadId },
        rootThreadId,
      );
      say(`root run ${rootThreadId} is ${root?.status} at ${root?.path}`);
      say(`see it at ${server.uiAddress}/namespaces/default/workflows/${rootThreadId}`);
      await handle.terminate('demo finished');
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
