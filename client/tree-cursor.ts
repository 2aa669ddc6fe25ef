import { z } from 'zod';
import { ErrorKind, KitError } from '../domain/errors';
import { ThreadId } from '../domain/ids';
import type { HistoryPosition } from './history-tail';

/** The histories a thread is read from in the tree stream. */
export type SourceName = 'conversation' | 'mailbox';
export type Position = HistoryPosition & { index: number };

/** Sends the cursor remembers at most (their receipts not yet yielded). */
export const rememberedSends = 2_000;

const HistoryAt = z.object({ runId: z.string().min(1).max(200), eventId: z.number().int().min(0) });
const PositionAt = HistoryAt.extend({ index: z.number().int().min(0) });

/** What a tree stream's cursor holds: checked whole when given back, so a stale or edited one is refused. */
const CursorSchema = z.object({
  v: z.literal(1),
  /** Threads known (spawned), by id: their path and where each of their histories was read up to. */
  threads: z.record(
    ThreadId,
    z.object({
      path: z.string().max(100_000),
      at: z.object({ conversation: PositionAt.optional(), mailbox: PositionAt.optional() }),
      /** Where its own history is read again from on a resume: a request taken there is still unanswered. */
      from: HistoryAt.optional(),
    }),
  ),
  /**
   * Sends yielded whose receipt has not been (`sender|operationId`, at most the latest 2,000), so a
   * receipt after a resume knows its send came.
   */
  sends: z.array(z.string().max(1_000)).max(rememberedSends),
});
export type Cursor = z.infer<typeof CursorSchema>;

/** The cursor `raw` (a stream's `after`), or a new one at the start of `top`'s subtree. */
export function parseCursor(raw: unknown, top: ThreadId, rootPath: string): Cursor {
  if (raw === undefined) return { v: 1, threads: { [top]: { path: rootPath, at: {} } }, sends: [] };
  let parsed: Cursor | undefined;
  try {
    const result = typeof raw === 'string' ? CursorSchema.safeParse(JSON.parse(raw)) : undefined;
    parsed = result?.success ? result.data : undefined;
  } catch {
    // Reported below.
  }
  // A cursor of this stream always holds the thread it starts at.
  if (parsed?.threads[top]) return parsed;
  throw new KitError(ErrorKind.Protocol, 'streamTree: `after` is not a cursor this stream gave', {
    fields: ['after'],
  });
}
