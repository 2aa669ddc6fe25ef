import { Command, Option } from 'commander';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { WorkflowSource } from '../../create-worker';
import { installWorkerRuntime } from '../../runtime';
import { workerNote } from '../../worker-logs';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';

export const WorkflowBundleOption = z.object({ workflowBundle: z.string().min(1).optional() });

/** `--workflow-bundle <file>`: a prebuilt bundle instead of bundling workflows/ at start (tests, images). */
export const workflowBundleOption = () =>
  new Option('--workflow-bundle <file>', 'a prebuilt workflow bundle (skips bundling at start)').hideHelp();

/** The workflow source a `--workflow-bundle` value stands for. */
export const workflowSource = (bundle: string | undefined): WorkflowSource | undefined =>
  bundle ? { workflowBundle: { codePath: resolve(bundle) } } : undefined;

const WorkerOptions = ConnectionOptions.merge(WorkflowBundleOption);

/** `agents-kit worker`: one worker on the configured Temporal and task queue until SIGINT/SIGTERM. */
export function workerCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('worker').description(
      'run an agents-kit worker against the configured Temporal (same as npm run worker)',
    ),
  )
    .addOption(workflowBundleOption())
    .action(async (raw: unknown) => {
      const options = parseOptions(WorkerOptions, raw, 'worker');
      const config = configFrom(options);
      const note = workerNote(config.AGENTS_KIT_LOG_FORMAT, output.note);
      note(`starting a worker on ${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE})…`);
      // Worker logs below WARN are noise for an interactive tool; signals still stop workers gracefully.
      await installWorkerRuntime(config, 'WARN');
      const { runWorker } = await import('../../run-worker');
      await runWorker({
        config,
        workflows: workflowSource(options.workflowBundle),
        onReady: () => {
          note(`worker polling task queue ${config.AGENTS_KIT_TASK_QUEUE}; stop with Ctrl-C`);
          if (config.AGENTS_KIT_METRICS_ADDRESS)
            note(`metrics at http://${config.AGENTS_KIT_METRICS_ADDRESS}/metrics`);
          if (options.json) output.json({ event: 'worker-ready', taskQueue: config.AGENTS_KIT_TASK_QUEUE });
        },
        onStopping: note,
      });
      note('worker stopped');
    });
}
