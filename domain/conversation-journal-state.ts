import { z } from 'zod';
import { ReceiverLease, SettledResolution } from './conversation-schemas';
import { ConversationId, NotificationId } from './ids';
import { JournalEntry, PageRef } from './conversation-pages';

/** How many notification ids are remembered to drop re-published duplicates (a retried publisher). */
export const rememberedNotificationIds = 2_000;
/** How many resolutions are kept for idempotent re-resolves; older ones are forgotten first. */
export const rememberedResolutions = 10_000;

/** Everything a conversation carries through continue-as-new. Versioned so later runs can migrate it. */
export const ConversationJournalSnapshot = z
  .object({
    schemaVersion: z.literal(1),
    conversationId: ConversationId,
    lastSeq: z.number().int().min(0),
    acknowledgedThrough: z.number().int().min(0),
    backlog: z.array(JournalEntry),
    lease: ReceiverLease.nullable(),
    resolutions: z.array(SettledResolution),
    closed: z.boolean(),
    refusedAfterClose: z.number().int().min(0),
    recentNotificationIds: z.array(NotificationId),
    /** Passive items newer than every page, waiting to fill the next page (added with paging; optional). */
    spill: z.array(JournalEntry).default(() => []),
    /** The pages of the backlog, oldest first; all older than `spill`. */
    pages: z.array(PageRef).default(() => []),
  })
  .strict();
export type ConversationJournalSnapshot = z.infer<typeof ConversationJournalSnapshot>;
