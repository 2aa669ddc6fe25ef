// A worker in its own process, for the crash tests (SPEC S7.1): run with `node --import tsx` so a
// SIGKILL hits the process that polls (a `tsx` wrapper would leave it orphaned). Prints `ready`.
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import {
  createActivities,
  createModelProvider,
  defineTool,
  loadModelConfig,
  loadModelPrices,
} from '../../activities';
import { createAgentWorker } from '../../workers/create-worker';

/**
 * The rolling-deploy test's build B (AGENTS_KIT_TEST_WORKER_BUILD=B) changes an activity: its
 * `word_count` tool (a user tool overriding the built-in one) answers with an object naming its version.
 */
const buildTools =
  process.env.AGENTS_KIT_TEST_WORKER_BUILD === 'B'
    ? [
        defineTool({
          name: 'word_count',
          description: 'Counts the words of a text (version 2: says which version counted).',
          input: z.object({ text: z.string() }).strict(),
          run: async ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length, counter: 'v2' }),
        }),
      ]
    : [];

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
      tools: buildTools,
      model: createModelProvider(loadModelConfig()),
      prices: loadModelPrices(),
    }),
    workflows: { workflowBundle: { codePath: bundlePath } },
    // Killed workers leave sticky tasks behind: hand them back to the queue quickly.
    // Drained by SIGTERM, running activities get 10 s to finish before they are cancelled.
    extra: { stickyQueueScheduleToStartTimeout: '1 second', shutdownGraceTime: '10 seconds' },
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
