import { loadConfig } from './config';
import { connectWorker } from './connect';
import { createActivities } from '../activities';
import { createAgentWorker } from './create-worker';

/** `npm run worker`: one agents-kit worker on the configured task queue, until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const connection = await connectWorker(config);
  try {
    const worker = await createAgentWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.AGENTS_KIT_TASK_QUEUE,
      activities: createActivities(),
    });
    console.error(
      `[agents-kit] worker on ${config.TEMPORAL_ADDRESS}, task queue ${config.AGENTS_KIT_TASK_QUEUE}`,
    );
    await worker.run();
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(`[agents-kit] worker stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
