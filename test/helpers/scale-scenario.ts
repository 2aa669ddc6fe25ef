import type { Client } from '@temporalio/client';
import type { AttachOptions, ThreadService } from '../../client/thread-service';
import { attachRun } from './runs';

/** What the scale scenarios (scale-*.ts) share: their options, a pool of client calls, timings. */

/** Runs `count` tasks, at most `concurrency` at a time; results in index order. */
export async function pool<Result>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array<Result>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let index = next++; index < count; index = next++) results[index] = await task(index);
    }),
  );
  return results;
}

/** Seconds since `since` (a `performance.now()`), to one decimal. */
export const seconds = (since: number): number => Math.round((performance.now() - since) / 100) / 10;

/** Options common to the root-run scenarios. */
export interface RunScenarioOptions {
  client: Client;
  taskQueue: string;
  /** Root and agents' continue-as-new threshold; the library default (4,000) when omitted. */
  continueAsNewAfterEvents?: number;
  /** Client calls in flight at once. */
  concurrency?: number;
  log?: (line: string) => void;
}

/** The root run of a scenario, with the scenario's continue-as-new threshold when it sets one. */
export const attachScenarioRun = (
  options: RunScenarioOptions,
  overrides: Partial<AttachOptions> = {},
): Promise<ThreadService> =>
  attachRun(options.client, options.taskQueue, {
    ...(options.continueAsNewAfterEvents
      ? { continueAsNewAfterEvents: options.continueAsNewAfterEvents }
      : {}),
    ...overrides,
  });
