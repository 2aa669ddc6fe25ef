import type { Worker } from '@temporalio/worker';
import {
  createActivities,
  createMcpTools,
  createModelProvider,
  loadModelConfig,
  loadModelPrices,
} from '../activities';
import { loadMcpServers, type EnvironmentConfig } from './config';
import { createKeylessCodec } from '../client/encryption-codec';
import { tracingFromEnvironment } from '../client/tracing';
import { configuredCodec, connectWorker } from './connect';
import { createAgentWorker, type WorkflowSource } from './create-worker';

/** What a worker process runs with. */
export interface RunWorkerOptions {
  config: EnvironmentConfig;
  /** Prebuilt workflow bundle or the source folder (bundled at start, the default). */
  workflows?: WorkflowSource | undefined;
  /** Called once the worker polls its task queue. */
  onReady?: ((worker: Worker) => void) | undefined;
}

/**
 * Runs one agents-kit worker on the configured Temporal and task queue until it is shut down.
 * Temporal's Runtime stops it gracefully on SIGINT/SIGTERM (in-flight tasks finish first), and then
 * this resolves; the connection and the MCP servers' connections (stdio servers stopped) are closed
 * either way. With `AGENTS_KIT_CODEC_KEYS` set, payloads are encrypted (SPEC S3.9); with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) set, the tree's spans are exported over
 * OTLP (SPEC S11.2), flushed when the worker stops.
 */
export async function runWorker({ config, workflows, onReady }: RunWorkerOptions): Promise<void> {
  // The model configuration is validated before anything connects (SPEC S8.3).
  const model = createModelProvider(loadModelConfig());
  const prices = loadModelPrices();
  const tracing = await tracingFromEnvironment(process.env, { serviceName: 'agents-kit-worker' });
  // Without keys, encrypted payloads fail with an error that says to set them (see connectClient).
  const codec = configuredCodec(config) ?? createKeylessCodec();
  const mcpServers = loadMcpServers(config);
  const connection = await connectWorker(config);
  // SPEC S11.1: one pool of MCP connections per worker, opened on first use, closed when it stops.
  const mcp = Object.keys(mcpServers).length > 0 ? createMcpTools(mcpServers) : undefined;
  try {
    const worker = await createAgentWorker({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.AGENTS_KIT_TASK_QUEUE,
      maxCachedWorkflows: config.AGENTS_KIT_MAX_CACHED_WORKFLOWS,
      activities: createActivities({ model, prices, ...(mcp ? { mcp } : {}) }),
      ...(workflows ? { workflows } : {}),
      codec,
      tracing,
    });
    onReady?.(worker);
    await worker.run();
  } finally {
    await mcp?.close();
    await connection.close();
    await tracing?.shutdown();
  }
}
