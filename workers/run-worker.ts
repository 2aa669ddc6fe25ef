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
import { createAgentWorker, defaultShutdownGraceMs, type WorkflowSource } from './create-worker';

/** What a worker process runs with. */
export interface RunWorkerOptions {
  config: EnvironmentConfig;
  /** Prebuilt workflow bundle or the source folder (bundled at start, the default). */
  workflows?: WorkflowSource | undefined;
  /** Called once the worker polls its task queue. */
  onReady?: ((worker: Worker) => void) | undefined;
  /** The grace when `AGENTS_KIT_SHUTDOWN_GRACE_MS` is unset (default {@link defaultShutdownGraceMs}). */
  shutdownGraceMs?: number | undefined;
  /**
   * Called with what to tell the operator when a signal stops the worker: the grace its running model
   * calls and tools get, or, at a second signal, that it stops at once.
   */
  onStopping?: ((note: string) => void) | undefined;
}

/** What a worker says when the first stop signal starts its graceful stop. */
const stoppingNote = (graceMs: number): string =>
  graceMs > 0
    ? `stopping: no new tasks; running model calls and tools get up to ${graceMs / 1000} s to finish (AGENTS_KIT_SHUTDOWN_GRACE_MS), then are cancelled and retried elsewhere…`
    : 'stopping: no new tasks; running model calls and tools are cancelled and retried elsewhere (AGENTS_KIT_SHUTDOWN_GRACE_MS=0)…';

/** What a worker says when a second stop signal stops it at once. */
const forcedNote = (signal: string): string =>
  `stopping now (a second ${signal}): running model calls and tools are left to time out and be retried elsewhere`;

/** The signals on which Temporal's Runtime shuts workers down, as a deploy or Ctrl-C sends them. */
const stopSignals = ['SIGTERM', 'SIGINT'] as const;

/**
 * How long after a stop signal another one is the same signal delivered twice: a terminal's Ctrl-C (or
 * anything that signals the process group) reaches both `bin/agents-kit.mjs` and the worker process it
 * forwards signals to.
 */
const sameSignalMs = 2_000;

/**
 * Listens for stop signals for the worker's whole run. Temporal's Runtime starts the graceful stop at the
 * first and then stops listening, so without a listener of ours a second signal would kill the process
 * with Node's default action, mid-drain. The first is noted; a repeat within {@link sameSignalMs} is
 * ignored; a later one stops the process at once (Ctrl-C again to force), as it says. Returns the
 * function that stops listening.
 */
function listenForStop(onStopping: () => void, onForced: (signal: string) => void): () => void {
  let firstAt: number | undefined;
  const listener = (signal: NodeJS.Signals) => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      onStopping();
    } else if (Date.now() - firstAt >= sameSignalMs) {
      onForced(signal);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
  };
  for (const signal of stopSignals) process.on(signal, listener);
  return () => {
    for (const signal of stopSignals) process.off(signal, listener);
  };
}

/**
 * Runs one agents-kit worker on the configured Temporal and task queue until it is shut down.
 * Temporal's Runtime stops it gracefully on SIGINT/SIGTERM: it stops polling, finishes the workflow tasks
 * it holds and gives running activities `AGENTS_KIT_SHUTDOWN_GRACE_MS` (else `shutdownGraceMs`, else
 * {@link defaultShutdownGraceMs}) before cancelling them; then this resolves. The connection and the
 * MCP servers' connections (stdio servers stopped) are closed either way. With `AGENTS_KIT_CODEC_KEYS`
 * set, payloads are encrypted (SPEC S3.9); with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`)
 * set, the tree's spans are exported over OTLP (SPEC S11.2), flushed when the worker stops.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, workflows, onReady, onStopping } = options;
  const shutdownGraceMs =
    config.AGENTS_KIT_SHUTDOWN_GRACE_MS ?? options.shutdownGraceMs ?? defaultShutdownGraceMs;
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
  const stopListening = listenForStop(
    () => onStopping?.(stoppingNote(shutdownGraceMs)),
    (signal) => onStopping?.(forcedNote(signal)),
  );
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
      shutdownGraceMs,
    });
    onReady?.(worker);
    await worker.run();
  } finally {
    stopListening();
    await mcp?.close();
    await connection.close();
    await tracing?.shutdown();
  }
}
