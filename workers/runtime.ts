import type { LogLevel } from '@temporalio/worker';
import type { EnvironmentConfig } from './config';
import { writeJsonLog } from './worker-logs';

/** What a worker process's runtime is configured by. */
export type RuntimeConfig = Pick<
  EnvironmentConfig,
  'AGENTS_KIT_METRICS_ADDRESS' | 'AGENTS_KIT_LOG_LEVEL' | 'AGENTS_KIT_LOG_FORMAT'
>;

/**
 * Installs Temporal's Runtime for a worker process, before its first connection:
 * - its log at `AGENTS_KIT_LOG_LEVEL` (else `defaultLevel`), as Temporal's text lines or, with
 *   `AGENTS_KIT_LOG_FORMAT=json`, one JSON object per line; the SDK's native side logs through the same
 *   logger (at that level, in that format) instead of writing coloured lines to the console itself;
 * - with `AGENTS_KIT_METRICS_ADDRESS` set, a Prometheus endpoint there (`http://<address>/metrics`)
 *   serving the SDK's worker metrics and agents-kit's model metrics (`activities/model-metrics.ts`).
 */
export async function installWorkerRuntime(
  config: RuntimeConfig,
  defaultLevel: LogLevel = 'INFO',
): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const level = config.AGENTS_KIT_LOG_LEVEL ?? defaultLevel;
  const bindAddress = config.AGENTS_KIT_METRICS_ADDRESS;
  Runtime.install({
    logger:
      config.AGENTS_KIT_LOG_FORMAT === 'json'
        ? new DefaultLogger(level, writeJsonLog)
        : new DefaultLogger(level),
    telemetryOptions: {
      logging: { filter: { core: level, other: 'ERROR' }, forward: {} },
      ...(bindAddress ? { metrics: { prometheus: { bindAddress } } } : {}),
    },
  });
}
