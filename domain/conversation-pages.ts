import { z } from 'zod';
import { jsonBytes } from './bytes';
import { ConversationId, matching } from './ids';
import { ConversationNotification } from './schemas';

// Paging keeps a conversation's continue-as-new input bounded by bytes however far its receiver falls
// behind (SPEC S5.2, S7.3): passive notifications past a high-water mark are spilled, in seq order, into
// page workflows, and read back oldest first when the in-memory backlog drains.

/** One backlog item; `mirroredTo` names the root conversation an interaction was mirrored to (S5.9). */
export const JournalEntry = z
  .object({ notification: ConversationNotification, mirroredTo: ConversationId.optional() })
  .strict();
export type JournalEntry = z.infer<typeof JournalEntry>;

/**
 * What proves a page's request and delivery (SPEC S3.9): a random value in the page's input and in its
 * conversation's reference to it, as secret as the histories that hold them. Pages cut before patch
 * `pageTokens` have none.
 */
export const PageToken = matching(/^[0-9a-f-]{36}$/, 'expected a page token (a UUID)');

/** A page of the backlog held by a page workflow: passive items `firstSeq..lastSeq` (not all seqs in between). */
export const PageRef = z
  .object({
    workflowId: z.string().min(1),
    firstSeq: z.number().int().min(1),
    lastSeq: z.number().int().min(1),
    count: z.number().int().min(1),
    bytes: z.number().int().min(0),
    token: PageToken.optional(),
  })
  .strict();
export type PageRef = z.infer<typeof PageRef>;

/** How a conversation pages its backlog; the low-water mark is half the high-water mark. */
export interface PagingLimits {
  /** Past this many bytes of in-memory backlog, new passive items are spilled toward pages. */
  highWaterBytes: number;
  /** Most bytes of entries in one page (and so in one page workflow's input). */
  pageBytes: number;
}

// SPEC S3.10: the bounds, in bytes as JSON, of each part of the backlog a conversation carries through
// continue-as-new. `conversation-carry-bound.test.ts` fills a journal to all of them at once and checks
// the workflow's input stays under `carriedInputBudgetBytes`.

/**
 * The most one notification takes as JSON (QuotaExceeded past it): an agent's reply (its turn result is
 * clipped to 256 KiB) with room for its envelope. The schema's 100,000 characters may take 600 KB.
 */
export const maxEntryBytes = 264 * 1024;
/**
 * The most bytes of unresolved interactions a conversation holds (they are never paged). Past it a new
 * one is refused (QuotaExceeded), not an old one forgotten: a standalone conversation's interaction is
 * answered only here. An agent's refused ask times out as denied; a refused mirror stays at its origin.
 */
export const maxPendingInteractionBytes = 256 * 1024;
/** The high-water mark and the page size take effect up to these (larger settings are clamped). */
export const maxHighWaterBytes = 512 * 1024;
export const maxPageBytes = 256 * 1024;
/**
 * The most bytes of page references: pages cannot be forgotten (nobody has read them), so past it no
 * page is cut, the spill fills, and passive notifications are refused (QuotaExceeded) until the receiver
 * reads. Some 900 pages at their largest (256 KiB each by default: over 200 MB of unread backlog).
 */
export const maxPageRefBytes = 192 * 1024;
/** The spill holds less than a page until it is cut, and one notification more (QuotaExceeded past it). */
export const maxSpillBytes = (limits: PagingLimits): number => limits.pageBytes + maxEntryBytes;

/** `limits` with the high-water mark and the page size clamped to their largest. */
export const clampedLimits = (limits: PagingLimits): PagingLimits => ({
  highWaterBytes: Math.min(limits.highWaterBytes, maxHighWaterBytes),
  pageBytes: Math.min(limits.pageBytes, maxPageBytes),
});

/**
 * Resolutions a conversation keeps for idempotent re-resolves, bounded by bytes as well as count; the
 * oldest are forgotten first (a re-resolve of a forgotten one is NotFound: its first answer stands).
 */
export const rememberedResolutionBytes = 128 * 1024;

/** The input of a page workflow: the conversation to answer, its page of entries in seq order, its token. */
export const ConversationPageInput = z
  .object({
    conversationId: ConversationId,
    entries: z.array(JournalEntry).min(1),
    token: PageToken.optional(),
  })
  .strict();
export type ConversationPageInput = z.infer<typeof ConversationPageInput>;

/** A page workflow's answer to the conversation that asked for its entries. */
export const PageDelivery = z
  .object({ pageId: z.string().min(1), entries: z.array(JournalEntry), token: PageToken.optional() })
  .strict();
export type PageDelivery = z.infer<typeof PageDelivery>;

/** A conversation's request for its page's entries (none from a conversation of before `pageTokens`). */
export const PageRequest = z.object({ token: PageToken }).strict();
export type PageRequest = z.infer<typeof PageRequest>;

const sizes = new WeakMap<object, number>();

/** The JSON size of `value` in bytes (what it weighs in a payload), cached per object. */
export function serializedBytes(value: object): number {
  let size = sizes.get(value);
  if (size === undefined) {
    size = jsonBytes(value);
    sizes.set(value, size);
  }
  return size;
}

/** `entries` and `more` merged in seq order; an item whose seq is already there is dropped (a re-sent page). */
export function mergeBySeq(entries: readonly JournalEntry[], more: readonly JournalEntry[]): JournalEntry[] {
  const bySeq = new Map<number, JournalEntry>();
  for (const entry of [...more, ...entries]) bySeq.set(entry.notification.seq, entry);
  return [...bySeq.values()].sort((left, right) => left.notification.seq - right.notification.seq);
}

/**
 * The oldest entries of `spill` that fill one page (at least one entry, at most `pageBytes` unless a
 * single entry is larger), or none while the spill is smaller than a page.
 */
export function takePage(spill: readonly JournalEntry[], pageBytes: number): JournalEntry[] {
  let total = 0;
  for (const entry of spill) total += serializedBytes(entry);
  if (total < pageBytes) return [];
  let bytes = 0;
  let end = 0;
  while (end < spill.length && (end === 0 || bytes + serializedBytes(spill[end]!) <= pageBytes)) {
    bytes += serializedBytes(spill[end]!);
    end++;
  }
  return spill.slice(0, end);
}
