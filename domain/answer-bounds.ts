import { jsonBytes } from './bytes';
import { ErrorKind, KitError } from './errors';
import { carriedResultBytes, clipOutcome, clipToBytes, maxTurnResultBytes } from './carry-bounds';
import type { ControlResults, WaitResult } from './operations';
import type { AgentThread } from './schemas';

/**
 * SPEC S3.10: the most one answer of the root run takes as JSON — a listing, a wait's outcomes. Temporal
 * refuses a payload over 2 MiB (the task that answers fails, again and again), and a tree's threads
 * have tasks of up to 100,000 characters and turn results of up to 256 KiB each.
 */
export const maxAnswerBytes = 1_536 * 1024;

/**
 * How much of each task and turn result an answer keeps, tried in turn until the answer fits. The last
 * level always fits: the registry keeps its records' smallest forms within ~900 kB, and the clip notes
 * add ~450 bytes a thread.
 */
const clipLevels = [maxTurnResultBytes, carriedResultBytes, 1_024, 0];

/** A thread with its task and turn results clipped to `maxBytes` each (a clip note at the least). */
export function clippedThread(thread: AgentThread, maxBytes: number): AgentThread {
  const what = 'an answer';
  const { latestTurn, firstTurn, ...rest } = thread;
  return {
    ...rest,
    task: clipToBytes(thread.task, maxBytes, 'the task in an answer (load the thread alone for more)'),
    ...(latestTurn ? { latestTurn: clipOutcome(latestTurn, maxBytes, what) } : {}),
    ...(firstTurn ? { firstTurn: clipOutcome(firstTurn, maxBytes, what) } : {}),
  };
}

/**
 * The items clipped the least (by {@link clipLevels}) that fits {@link maxAnswerBytes}, counted item by
 * item and given up at the first item past the bound (the text of a huge listing is slow to build).
 */
function fitted<Item>(items: Item[], clip: (item: Item, maxBytes: number) => Item): Item[] {
  const within = (clipped: (item: Item) => Item): Item[] | undefined => {
    const kept: Item[] = [];
    let bytes = 1;
    for (const item of items) {
      const next = clipped(item);
      if ((bytes += jsonBytes(next) + 1) > maxAnswerBytes) return undefined;
      kept.push(next);
    }
    return kept;
  };
  if (within((item) => item)) return items;
  for (const level of clipLevels) {
    const kept = within((item) => clip(item, level));
    if (kept) return kept;
  }
  return items.map((item) => clip(item, 0));
}

/** Threads as an answer carries them: whole when they fit, clipped evenly otherwise. */
export const fittedThreads = (threads: AgentThread[]): AgentThread[] => fitted(threads, clippedThread);

/** A wait's outcomes as its answer carries them: whole when they fit, clipped evenly otherwise. */
export const fittedWait = (result: WaitResult): WaitResult => ({
  ...result,
  outcomes: fitted(result.outcomes, ({ latestTurn, ...outcome }, maxBytes) => ({
    ...outcome,
    ...(latestTurn ? { latestTurn: clipOutcome(latestTurn, maxBytes, 'an answer') } : {}),
  })),
});

/** SPEC S3.10: the answer of a control operation, fitted to {@link maxAnswerBytes}. */
export function fittedAnswer<Type extends keyof ControlResults>(
  type: Type,
  answer: ControlResults[Type],
): ControlResults[Type] {
  const fit = answer as ControlResults[keyof ControlResults];
  switch (type) {
    case 'list-threads':
    case 'close':
      return fittedThreads(fit as AgentThread[]) as ControlResults[Type];
    case 'wait':
      return fittedWait(fit as WaitResult) as ControlResults[Type];
    case 'spawn':
    case 'spawn-remote':
    case 'load-thread':
      return (fit && fittedThreads([fit as AgentThread])[0]) as ControlResults[Type];
    default:
      return answer;
  }
}

/**
 * SPEC S3.10: the most an update's arguments take as JSON. Temporal's update protocol sends every
 * update's arguments back in the workflow task that accepts (or rejects) it, up to 10 updates may arrive
 * in one task, and the task's whole answer must stay under 4 MiB: ten at this bound leave room for the
 * task's child starts and answers. (Agents spawn by signal, which is not echoed: their specs may be larger.)
 */
export const maxUpdateBytes = 160 * 1024;
/** A publish with receipt may carry one notification at its own bound (264 KiB). */
export const maxPublishUpdateBytes = 300 * 1024;

/** Protocol, naming the limit, when `args` take more than `maxBytes` as JSON. */
export function checkUpdateBytes(args: unknown, what: string, maxBytes = maxUpdateBytes): void {
  const bytes = jsonBytes(args);
  if (bytes > maxBytes)
    throw new KitError(
      ErrorKind.Protocol,
      `${what}: ${bytes} bytes as JSON is over the ${maxBytes}-byte limit of an update's arguments (Temporal sends them back in the workflow task that takes the update): keep large context out of the request`,
      { limit: 'updateBytes', value: maxBytes },
    );
}
