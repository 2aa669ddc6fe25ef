import { loadConfig } from './config';
import { runWorker, stoppingNote } from './run-worker';
import { installWorkerRuntime } from './runtime';

/** `npm run worker`: one agents-kit worker on the configured task queue, until SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfig();
  await installWorkerRuntime(config);
  await runWorker({
    config,
    onReady: () =>
      console.error(
        `[agents-kit] worker on ${config.TEMPORAL_ADDRESS}, task queue ${config.AGENTS_KIT_TASK_QUEUE}`,
      ),
    onStopping: (graceMs) => console.error(`[agents-kit] ${stoppingNote(graceMs)}`),
  });
}

main().catch((error: unknown) => {
  console.error(`[agents-kit] worker stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
