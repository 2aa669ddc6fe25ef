import { existsSync } from 'node:fs';
import { z } from 'zod';
import { loadCodecKeys } from '../client/codec-keys';
import { mcpServersFromJson, maxMcpServersJson, type McpServers } from '../activities/mcp-config';
import { KitError, objectInput, parseInput } from '../domain/errors';
import { defaultMaxCachedWorkflows } from './heap-cap';

/** `host:port`, the form Temporal's gRPC frontend address takes. */
const hostPort = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
const address = z.string().refine((value) => {
  const port = hostPort.exec(value)?.[1];
  return port !== undefined && Number(port) >= 1 && Number(port) <= 65_535;
}, 'expected host:port with a port from 1 to 65535, like 127.0.0.1:7233');

/** Task queue names: what Temporal accepts, without surprises in shells and URLs. */
export const TaskQueueName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/, 'expected 1-200 characters of A-Z, a-z, 0-9, . _ : / -');

const filePath = z
  .string()
  .min(1)
  .refine((path) => existsSync(path), 'no such file');

/** A whole number from `min` to `max`, read from its text; one message names the range. */
function wholeNumber(min: number, max: number, of = '') {
  const message = `expected a whole number${of} from ${min} to ${max}`;
  return z.coerce.number({ error: message }).int(message).min(min, message).max(max, message);
}

/** Environment of every agents-kit process (SPEC S8.3), validated at start-up. */
export const EnvironmentConfig = z.object({
  TEMPORAL_ADDRESS: address.default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/, 'expected a Temporal namespace name')
    .default('default'),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS: z.enum(['true', 'false'], { error: 'expected true or false' }).optional(),
  TEMPORAL_TLS_CERT_PATH: filePath.optional(),
  TEMPORAL_TLS_KEY_PATH: filePath.optional(),
  AGENTS_KIT_TASK_QUEUE: TaskQueueName.default('agents-kit'),
  /** Workflows a worker keeps in memory (each ~3 MB); the rest replay from history when they wake. */
  AGENTS_KIT_MAX_CACHED_WORKFLOWS: wholeNumber(1, 100_000).default(defaultMaxCachedWorkflows),
  /**
   * The payload codec's keys, `id:base64key,…` (the first encrypts, all decrypt); unset: payloads are
   * stored in plain JSON. Validated by `loadCodecKeys`.
   */
  AGENTS_KIT_CODEC_KEYS: z.string().min(1).optional(),
  /**
   * How long a stopping worker (SIGTERM, SIGINT) lets its running activities (model calls, tools) finish
   * before it cancels them, in ms; a cancelled call is retried on another worker. Unset: 20 s for
   * `agents-kit worker` (`defaultShutdownGraceMs`), 0 for `agents-kit dev`. Keep it below the time your
   * orchestrator gives a stopping process (Kubernetes: 30 s by default).
   */
  AGENTS_KIT_SHUTDOWN_GRACE_MS: wholeNumber(0, 3_600_000, ' of milliseconds').optional(),
  /**
   * `host:port` where a worker serves Prometheus metrics (`/metrics`): Temporal's worker metrics and
   * agents-kit's model calls, tokens and latencies. Unset: no metrics endpoint.
   */
  AGENTS_KIT_METRICS_ADDRESS: address.optional(),
  /**
   * A worker's log level (Temporal's and the SDK's native side's); unset: WARN for `agents-kit worker`,
   * INFO for `npm run worker`.
   */
  AGENTS_KIT_LOG_LEVEL: z
    .enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'], {
      error: 'expected TRACE, DEBUG, INFO, WARN or ERROR',
    })
    .optional(),
  /**
   * `json`: a worker logs one JSON object per line (time, level, message, metadata); `text` (default):
   * Temporal's lines.
   */
  AGENTS_KIT_LOG_FORMAT: z.enum(['text', 'json'], { error: 'expected text or json' }).optional(),
  /**
   * SPEC S11.1: the worker's MCP servers, JSON: `{"name": {"command": "…", "args": […], "env": {…},
   * "cwd": "…"}}` (stdio) or `{"name": {"url": "https://…", "headers": {…}}}` (streamable HTTP), each
   * with optional `needsApproval`, `approvalTools`, `timeoutMs`, `connectTimeoutMs`. Validated by
   * {@link loadMcpServers}.
   */
  AGENTS_KIT_MCP_SERVERS: z.string().min(1).max(maxMcpServersJson).optional(),
  /**
   * SPEC S3.9: the root capability `agents-kit run` printed (64 hex digits), for commands that act on a
   * running root (tree, send, interrupt, shutdown, reconcile, resolve, watch's answers). Secret.
   */
  AGENTS_KIT_CAPABILITY: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected the 64 hex digits of a root capability')
    .optional(),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfig>;

/**
 * Reads and validates the environment (SPEC S8.3). Empty values count as unset, so
 * `FOO=` in a compose file or shell means "use the default". Throws a Protocol KitError naming the
 * variable.
 */
export function loadConfig(environment: Record<string, string | undefined> = process.env): EnvironmentConfig {
  const present = Object.fromEntries(
    Object.entries(objectInput(environment, 'environment')).filter(
      ([, value]) => value !== undefined && value !== '',
    ),
  );
  const config = parseInput(EnvironmentConfig, present, 'environment');
  if (Boolean(config.TEMPORAL_TLS_CERT_PATH) !== Boolean(config.TEMPORAL_TLS_KEY_PATH)) {
    throw KitError.protocol(
      'environment: set both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH, or neither',
      { fields: ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH'] },
    );
  }
  if (config.TEMPORAL_TLS === 'false' && (config.TEMPORAL_API_KEY || config.TEMPORAL_TLS_CERT_PATH)) {
    throw KitError.protocol(
      'environment: TEMPORAL_TLS=false contradicts TEMPORAL_API_KEY / TEMPORAL_TLS_CERT_PATH, which need TLS',
      { fields: ['TEMPORAL_TLS'] },
    );
  }
  // Checked here, so a bad key stops a process at start-up rather than at its first payload.
  loadCodecKeys(config);
  // And a bad MCP server entry before a worker connects, not at its first model call.
  loadMcpServers(config);
  return config;
}

/**
 * The MCP servers of `AGENTS_KIT_MCP_SERVERS` (SPEC S11.1), validated: a Protocol KitError names the
 * variable and the field (`AGENTS_KIT_MCP_SERVERS: files.command: …`). None when it is unset.
 */
export function loadMcpServers(config: Pick<EnvironmentConfig, 'AGENTS_KIT_MCP_SERVERS'>): McpServers {
  return mcpServersFromJson(config.AGENTS_KIT_MCP_SERVERS);
}
