import { Command } from 'commander';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { KitError } from '../../../domain/errors';
import { searchAttributeRegistrations } from '../../../domain/search-attributes';
import { startDevServer, defaultDataDir, portConflictOf, type PortOption } from '../../dev-server';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, intFlag, parseOptions } from '../options';
import { installWorkerRuntime } from '../../runtime';
import { WorkflowBundleOption, workflowBundleOption, workflowSource } from './worker';

const DevOptions = ConnectionOptions.omit({ address: true })
  .merge(WorkflowBundleOption)
  .extend({
    port: intFlag(1, 65_535).default(7233),
    uiPort: intFlag(1, 65_535).optional(),
    dbFile: z.string().min(1).default(join(defaultDataDir(), 'dev.sqlite')),
    headless: z.boolean().default(false),
    uiCodecEndpoint: z
      .string()
      .refine(
        (text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol),
        'expected an http(s) URL like http://127.0.0.1:8888',
      )
      .transform((text) => text.replace(/\/+$/, ''))
      .optional(),
  });

/** The flags that choose another port, for each port option of the dev server. */
const portFlags: Record<PortOption, string> = { port: '--port', uiPort: '--ui-port (or --headless)' };

/** A port conflict of the dev server, told with the flag that chooses another port. */
function withPortFlag(error: unknown): unknown {
  const conflict = portConflictOf(error);
  if (!conflict?.option || !KitError.is(error)) return error;
  return new KitError(error.kind, `${error.message} with ${portFlags[conflict.option]}`, error.details, {
    cause: error,
  });
}

/**
 * `agents-kit dev`: the embedded Temporal dev server (SQLite file, search attributes registered, Web UI)
 * plus a worker, until SIGINT/SIGTERM; then the worker drains and the server stops.
 */
export function devCommand(output: CliOutput): Command {
  return new Command('dev')
    .description('start the embedded Temporal dev server (SQLite under .agents-kit/, Web UI) and a worker')
    .option('--port <port>', 'the Temporal frontend port', '7233')
    .option('--ui-port <port>', 'the Web UI port (default: port + 1000)')
    .option(
      '--db-file <path>',
      'the SQLite database file (kept between runs)',
      join(defaultDataDir(), 'dev.sqlite'),
    )
    .option('--headless', 'no Web UI')
    .option(
      '--ui-codec-endpoint <url>',
      'a codec server the Web UI decodes payloads with (agents-kit codec-server prints its URL)',
    )
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .option('--task-queue <name>', 'the worker’s task queue (default: $AGENTS_KIT_TASK_QUEUE or agents-kit)')
    .option('--json', 'print the addresses as one JSON document on stdout once ready')
    .addOption(workflowBundleOption())
    .action(async (raw: unknown) => {
      const options = parseOptions(DevOptions, raw, 'dev');
      const uiPort = options.uiPort ?? (options.port + 1000 <= 65_535 ? options.port + 1000 : undefined);
      // Validates the namespace and task queue before anything starts.
      const preflight = configFrom({ namespace: options.namespace, taskQueue: options.taskQueue });
      await installWorkerRuntime(preflight, 'WARN');
      const { runWorker } = await import('../../run-worker');
      output.note('starting the embedded Temporal dev server…');
      const server = await startDevServer({
        port: options.port,
        ...(uiPort !== undefined ? { uiPort } : {}),
        headless: options.headless,
        namespace: preflight.TEMPORAL_NAMESPACE,
        dbFile: resolve(options.dbFile),
        searchAttributes: searchAttributeRegistrations,
        ...(options.uiCodecEndpoint ? { uiCodecEndpoint: options.uiCodecEndpoint } : {}),
      }).catch((error: unknown) => {
        throw withPortFlag(error);
      });
      try {
        const config = configFrom({
          address: server.address,
          namespace: server.namespace,
          taskQueue: preflight.AGENTS_KIT_TASK_QUEUE,
        });
        const ready = {
          address: server.address,
          uiAddress: server.uiAddress ?? null,
          namespace: server.namespace,
          taskQueue: config.AGENTS_KIT_TASK_QUEUE,
          dbFile: server.dbFile,
          uiCodecEndpoint: options.uiCodecEndpoint ?? null,
          payloadsEncrypted: config.AGENTS_KIT_CODEC_KEYS !== undefined,
        };
        await runWorker({
          config,
          workflows: workflowSource(options.workflowBundle),
          // Ctrl-C on a dev machine stops at once unless AGENTS_KIT_SHUTDOWN_GRACE_MS says otherwise.
          shutdownGraceMs: 0,
          onStopping: (text) => output.note(text),
          onReady: () => {
            if (options.json) output.json(ready);
            else {
              output.line(`Temporal:  ${ready.address} (namespace ${ready.namespace})`);
              output.line(`Web UI:    ${ready.uiAddress ?? '(headless)'}`);
              output.line(`worker:    task queue ${ready.taskQueue}`);
              output.line(`database:  ${ready.dbFile}`);
              if (ready.uiCodecEndpoint) output.line(`codec:     ${ready.uiCodecEndpoint} (Web UI)`);
            }
            if (ready.payloadsEncrypted && !ready.uiCodecEndpoint && ready.uiAddress) {
              output.note(
                'payloads are encrypted (AGENTS_KIT_CODEC_KEYS); the Web UI shows ciphertext unless you run agents-kit codec-server and pass --ui-codec-endpoint',
              );
            }
            output.note(`ready; in another shell: TEMPORAL_ADDRESS=${ready.address} agents-kit run "<task>"`);
            output.note('stop with Ctrl-C');
          },
        });
        output.note('worker stopped; stopping the dev server…');
      } finally {
        await server.stop();
      }
      output.note('dev server stopped');
    });
}
