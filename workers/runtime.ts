import type { LogLevel } from '@temporalio/worker';
import type { EnvironmentConfig } from './config';

/**
 * Installs Temporal's Runtime for a worker process, before its first connection: a logger at `logLevel`
 * (Temporal's default, INFO, when omitted), and with `AGENTS_KIT_METRICS_ADDRESS` set, a Prometheus
 * endpoint there (`http://<address>/metrics`) serving the SDK's worker metrics (task latencies, slots,
 * failures, sticky cache) and agents-kit's model metrics (`activities/model-metrics.ts`).
 */
export async function installWorkerRuntime(
  config: Pick<EnvironmentConfig, 'AGENTS_KIT_METRICS_ADDRESS'>,
  logLevel?: LogLevel,
): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const bindAddress = config.AGENTS_KIT_METRICS_ADDRESS;
  Runtime.install({
    ...(logLevel ? { logger: new DefaultLogger(logLevel) } : {}),
    ...(bindAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress } } } } : {}),
  });
}
