import { loadConfig } from './config';
import { runWorker } from './run-worker';
import { installWorkerRuntime } from './runtime';
import { workerNote } from './worker-logs';

/** `npm run worker`: one agents-kit worker on the configured task queue, until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  const note = workerNote(config.AGENTS_KIT_LOG_FORMAT, (text) => console.error(`[agents-kit] ${text}`));
  await installWorkerRuntime(config);
  await runWorker({
    config,
    onReady: () => note(`worker on ${config.TEMPORAL_ADDRESS}, task queue ${config.AGENTS_KIT_TASK_QUEUE}`),
    onStopping: note,
  });
}

main().catch((error: unknown) => {
  console.error(`[agents-kit] worker stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
