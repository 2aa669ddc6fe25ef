import type { ShutdownReport } from '../../domain/control';
import type { AgentThread } from '../../domain/schemas';
import { type RunHistory, runHistoriesOf } from './run-histories';
import { eventually } from './runs';
import { attachScenarioRun, pool, type RunScenarioOptions, seconds } from './scale-scenario';

export interface ThreadsOutcome {
  rootThreadId: string;
  threads: AgentThread[];
  /** Counters right after the last spawn, and the listing once every sub-agent was idle. */
  counters: { live: number; total: number };
  listed: AgentThread[];
  shutdown: ShutdownReport;
  histories: RunHistory[];
  durations: { spawnS: number; idleS: number; shutdownS: number; totalS: number };
}

/**
 * One root run with `threads` sub-agents, spawned by the client as root; each replies once and idles.
 * Histories: every run of the root, plus every run of `sample` evenly spaced sub-agents.
 */
export async function manyThreads(
  options: RunScenarioOptions & { threads: number; sample?: number },
): Promise<ThreadsOutcome> {
  const { client, threads: count } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const service = await attachScenarioRun(options, {
    grant: { owner: 'tests', maxConcurrent: count, maxTotal: count },
  });
  const root = service.rootControls();
  const threads = await pool(count, options.concurrency ?? 8, async (index) => {
    const thread = await root.spawn({
      task: `idle worker ${index}`,
      name: `w${index}`,
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: `ready ${index}` }]] },
    });
    if ((index + 1) % 100 === 0) log(`  spawned ${index + 1}/${count} (${seconds(started)} s)`);
    return thread;
  });
  const spawnS = seconds(started);
  const counters = await service.counters();
  const listed = await eventually(
    () => root.listThreads(),
    (all) =>
      all.filter((thread) => thread.id !== service.rootThreadId && thread.status === 'idle').length >= count,
    `${count} idle sub-agents`,
    600_000,
  );
  const idleS = seconds(started);
  const shutdownStarted = performance.now();
  const shutdown = await service.shutdown();
  const shutdownS = seconds(shutdownStarted);
  const sample = options.sample ?? 5;
  const sampled = Array.from(
    { length: Math.min(sample, count) },
    (_, index) => threads[Math.floor((index * (count - 1)) / Math.max(1, sample - 1))]!,
  );
  const histories = await runHistoriesOf(client, [
    service.rootThreadId,
    ...new Set(sampled.map((thread) => thread.id)),
  ]);
  return {
    rootThreadId: service.rootThreadId,
    threads,
    counters,
    listed,
    shutdown,
    histories,
    durations: { spawnS, idleS, shutdownS, totalS: seconds(started) },
  };
}
