// A worker in its own process, for the crash tests (SPEC S7.1): run with `node --import tsx` so a
// SIGKILL hits the process that polls (a `tsx` wrapper would leave it orphaned). Prints `ready`.
import { NativeConnection } from '@temporalio/worker';
import { createActivities, createModelProvider, loadModelConfig, loadModelPrices } from '../../activities';
import { createAgentWorker } from '../../workers/create-worker';

async function main(): Promise<void> {
  const [address, taskQueue, bundlePath] = process.argv.slice(2);
  if (!address || !taskQueue || !bundlePath)
    throw new Error('usage: worker-child <address> <taskQueue> <bundlePath>');
  const connection = await NativeConnection.connect({ address });
  const worker = await createAgentWorker({
    connection,
    taskQueue,
    // The model the environment names (the scripted one by default; a test may slow its words down).
    activities: createActivities({
      model: createModelProvider(loadModelConfig()),
      prices: loadModelPrices(),
    }),
    workflows: { workflowBundle: { codePath: bundlePath } },
    // Killed workers leave sticky tasks behind: hand them back to the queue quickly.
    extra: { stickyQueueScheduleToStartTimeout: '1 second' },
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`worker-child: ${String(error)}\n`);
  process.exit(1);
});
