import type { MetricMeter } from '@temporalio/common';

/** How a model call ended, as the `outcome` tag of `agents_kit_model_calls` says it. */
export type ModelCallOutcome = 'completed' | 'failed' | 'interrupted';

/**
 * The model activity's metrics, through the worker's metric meter (Temporal's Runtime: exported where
 * its telemetry goes, e.g. Prometheus with `AGENTS_KIT_METRICS_ADDRESS`; nowhere without an exporter).
 * Each carries the worker's tags (namespace, task queue, activity type) and the model's id.
 *
 * - `agents_kit_model_calls` (counter): calls to the provider, by `outcome` (an interrupt is
 *   `interrupted`, any other error `failed`, retried or not);
 * - `agents_kit_model_tokens` (counter): tokens the provider reported, by `kind` (`input`, `output`);
 * - `agents_kit_model_call_latency` (histogram, ms): how long a call took, by `outcome`.
 */
export class ModelMetrics {
  constructor(private readonly meter: MetricMeter) {}

  /**
   * Records one call of `model` that took `ms` and ended as `outcome`, with its tokens when it completed.
   * Never throws: a metric that cannot be recorded must not fail the call it describes.
   */
  record(
    model: string,
    outcome: ModelCallOutcome,
    ms: number,
    usage?: { inputTokens: number; outputTokens: number },
  ): void {
    try {
      this.write(model, outcome, ms, usage);
    } catch {
      // Dropped: the call's result (and the usage ledger's record of it) is what counts.
    }
  }

  private write(
    model: string,
    outcome: ModelCallOutcome,
    ms: number,
    usage: { inputTokens: number; outputTokens: number } | undefined,
  ): void {
    const meter = this.meter.withTags({ model });
    meter.createCounter('agents_kit_model_calls', '1', 'model calls, by outcome').add(1, { outcome });
    meter
      .createHistogram('agents_kit_model_call_latency', 'int', 'ms', 'model call duration')
      .record(Math.max(0, Math.round(ms)), { outcome });
    if (!usage) return;
    const tokens = meter.createCounter('agents_kit_model_tokens', '1', 'tokens the provider reported');
    if (usage.inputTokens > 0) tokens.add(usage.inputTokens, { kind: 'input' });
    if (usage.outputTokens > 0) tokens.add(usage.outputTokens, { kind: 'output' });
  }
}
