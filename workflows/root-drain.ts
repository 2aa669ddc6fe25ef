import { ErrorKind, KitError } from '../domain/errors';
import type { RecentAnswerLog } from '../domain/recent-answers';
import type { InterAgentMessage } from '../domain/schemas';

/** What the root's answer log keeps of a drain: its messages when they fit, else which ones it took. */
type Taken = { messages: InterAgentMessage[] } | { count: number; firstSeq: number; lastSeq: number };

/**
 * SPEC S3.7, S3.10: the root's messages taken by one update, once, also when a retry of that update lands
 * on a later run of the root (Temporal knows update ids only within a run). A drain that took messages is
 * remembered by its update id in the root's answer log, which continue-as-new carries: a retry gets the
 * same messages back when they fit an entry of the log (`maxRememberedEntryBytes`); when they did not, it
 * gets a Conflict naming the messages the first attempt took, never an empty answer that would pass for
 * "nothing came". An empty drain is not remembered: a retry of it takes what has come since, which no
 * answer has given out, so nothing is lost or given twice (and polling leaves the log to other answers).
 */
export function takenOnce(
  recent: RecentAnswerLog,
  key: string | undefined,
  take: () => InterAgentMessage[],
): InterAgentMessage[] {
  const earlier = recent.find(key, null) as Taken | undefined;
  if (earlier && 'messages' in earlier) return earlier.messages;
  if (earlier) {
    throw new KitError(
      ErrorKind.Conflict,
      `this takeRootMessages update took the root's messages ${earlier.firstSeq}–${earlier.lastSeq} (${earlier.count}) on an earlier run of the root; they were too large to keep for a retry`,
      earlier,
    );
  }
  const messages = take();
  if (messages.length > 0 && !recent.remember(key, null, { messages } satisfies Taken)) {
    const taken: Taken = {
      count: messages.length,
      firstSeq: messages[0]!.seq,
      lastSeq: messages.at(-1)!.seq,
    };
    recent.remember(key, null, taken);
  }
  return messages;
}
