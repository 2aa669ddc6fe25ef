// No imports: the `agents-kit` launcher (bin/agents-kit.mjs) loads this before anything else, to decide
// whether a worker process needs a heap cap, and must stay fast.

/**
 * Workflows a worker keeps in memory. With the workflow code shared (`bundleOptions`) a cached
 * workflow costs only its own state, ~0.2–0.4 MB of RSS measured, so this bound, not the number of
 * threads, sets a worker's memory. Evicted workflows replay from history when they next wake. Set
 * with `AGENTS_KIT_MAX_CACHED_WORKFLOWS`.
 */
export const defaultMaxCachedWorkflows = 1_000;

/**
 * `NODE_OPTIONS` for a worker process: the caller's, plus a heap cap unless they set one. Evicting
 * cached workflows makes garbage, and without a cap V8 lets RSS float far above what is live
 * (RELIABILITY.md, worker memory): 512 MB plus half a megabyte per cached workflow. A bad cache size
 * is reported by the worker's own configuration check; the cap then uses the default.
 */
export function workerNodeOptions(environment: Record<string, string | undefined>): string {
  const options = environment.NODE_OPTIONS ?? '';
  if (/max-old-space-size/.test(options)) return options;
  const cached = Number(environment.AGENTS_KIT_MAX_CACHED_WORKFLOWS || defaultMaxCachedWorkflows);
  const workflows = Number.isInteger(cached) && cached > 0 ? cached : defaultMaxCachedWorkflows;
  return `${options} --max-old-space-size=${Math.round(512 + 0.5 * workflows)}`.trim();
}
