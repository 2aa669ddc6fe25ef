/** Latency percentiles and throughput of one benchmarked operation (pure: no I/O, no clocks). */

/** p50/p95/p99 (and the extremes) of a set of latency samples, in milliseconds. */
export interface LatencySummary {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * The `fraction` quantile (0 < fraction ≤ 1) of samples by the nearest-rank method: the smallest sample
 * such that at least `fraction` of all samples are ≤ it. Nearest-rank never invents a value that was
 * not measured, which matters for the small sample counts of a 2-core benchmark.
 *
 * @example percentile([5, 1, 3, 2, 4], 0.5) // 3
 */
export function percentile(samples: readonly number[], fraction: number): number {
  if (samples.length === 0) throw new RangeError('percentile of no samples');
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`fraction ${fraction} is not in (0, 1]`);
  const sorted = [...samples].sort((left, right) => left - right);
  const rank = Math.ceil(fraction * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Summarises latency samples (ms), rounded to 0.1 ms. */
export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    samples: samples.length,
    p50: round(percentile(samples, 0.5)),
    p95: round(percentile(samples, 0.95)),
    p99: round(percentile(samples, 0.99)),
    min: round(Math.min(...samples)),
    max: round(Math.max(...samples)),
    mean: round(samples.reduce((sum, sample) => sum + sample, 0) / samples.length),
  };
}

/** Drops the first `warmup` samples (JIT, connection and cache warm-up), keeping the rest in order. */
export function withoutWarmup<Sample>(samples: readonly Sample[], warmup: number): Sample[] {
  return samples.slice(Math.max(0, warmup));
}

/**
 * Operations per second over one or more measured windows: total operations divided by the total time
 * the windows took. Windows are `[start, end]` in ms and must not overlap.
 */
export function throughput(
  windows: readonly { operations: number; startMs: number; endMs: number }[],
): number {
  const operations = windows.reduce((sum, window) => sum + window.operations, 0);
  const elapsedMs = windows.reduce((sum, window) => sum + Math.max(0, window.endMs - window.startMs), 0);
  if (operations === 0 || elapsedMs === 0) return 0;
  return Math.round((operations / (elapsedMs / 1000)) * 10) / 10;
}

/** `value / reference`, rounded to 0.01; undefined when the reference is 0. */
export function ratio(value: number, reference: number): number | undefined {
  if (reference === 0) return undefined;
  return Math.round((value / reference) * 100) / 100;
}

/** A small seeded generator (mulberry32): the same seed gives the same sequence in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}
