import { z } from 'zod';
import { ConversationJournalSnapshot } from '../domain/conversation-journal-state';
import type { PagingLimits } from '../domain/conversation-pages';
import { ConversationOwner, PublishRequest } from '../domain/conversation-schemas';
import { ConversationId } from '../domain/ids';
import { LiveSnapshot } from '../domain/live-output';

/** How a conversation workflow starts (or continues as new, carrying its journal snapshot). */
export const ConversationWorkflowInput = z
  .object({
    /** SPEC S3.9 wire version. */
    protocolVersion: z.literal(1).default(1),
    conversationId: ConversationId,
    /** The thread it belongs to (absent for a standalone conversation a service publishes to). */
    owner: ConversationOwner.optional(),
    /** Longest a `receive` long-poll waits server-side before answering `idle` (capped at half the TTL). */
    receiveWaitMs: z.number().int().min(0).max(300_000).default(30_000),
    /** Continue as new once this run's history has this many events (Temporal suggests it at ~4,096). */
    continueAsNewAfterEvents: z.number().int().min(20).max(40_000).default(3_000),
    /** Continue as new after this many updates in one run (Temporal allows 2,000 per run). */
    continueAsNewAfterUpdates: z.number().int().min(1).max(1_900).default(1_500),
    /**
     * Past this many bytes of backlog in its own state, the conversation spills newer passive items into
     * page workflows; it reads them back, oldest first, below half of it. Keeps the continue-as-new
     * input (2 MiB limit) bounded however far the receiver falls behind. Takes effect up to 512 KiB
     * (`maxHighWaterBytes`: larger settings, accepted for earlier runs, are clamped).
     */
    backlogHighWaterBytes: z
      .number()
      .int()
      .min(1_024)
      .max(1_024 * 1_024)
      .default(512 * 1_024),
    /** Most bytes of entries in one page workflow's input. */
    pageBytes: z
      .number()
      .int()
      .min(512)
      .max(256 * 1_024)
      .default(256 * 1_024),
    /** How many runs came before this one. */
    generation: z.number().int().min(0).default(0),
    /** When the owner thread's end was published here (SPEC S5.10: retention runs from then). */
    ownerEndedAtMs: z.number().int().min(0).optional(),
    snapshot: ConversationJournalSnapshot.optional(),
    /** The text its thread's current model call streamed (SPEC S10.1), carried bounded. */
    live: LiveSnapshot.optional(),
    /** What its thread published before it started it: taken as the first publish (first run only). */
    first: PublishRequest.optional(),
  })
  .strict();
export type ConversationWorkflowInput = z.input<typeof ConversationWorkflowInput>;
export type ParsedConversationInput = z.output<typeof ConversationWorkflowInput>;

/** The paging limits of a conversation: always set, so every bound of its carried state applies. */
export const pagingLimitsOf = (input: ParsedConversationInput): PagingLimits => ({
  highWaterBytes: input.backlogHighWaterBytes,
  pageBytes: input.pageBytes,
});

/** What a run carries into the next one, besides its input's settings. */
export interface ConversationCarry {
  owner: ConversationOwner | undefined;
  ownerEndedAtMs: number | undefined;
  snapshot: ConversationJournalSnapshot;
  live?: LiveSnapshot | undefined;
}

/**
 * The input a conversation continues as new with: its settings, one more generation, its owner and the
 * journal's snapshot (SPEC S3.10: `conversation-carry-bound.test.ts` builds the largest one with this).
 */
export function continuationOf(
  input: ParsedConversationInput,
  { owner, ownerEndedAtMs, snapshot, live }: ConversationCarry,
): ConversationWorkflowInput {
  return {
    protocolVersion: 1,
    conversationId: input.conversationId,
    ...(owner ? { owner } : {}),
    receiveWaitMs: input.receiveWaitMs,
    continueAsNewAfterEvents: input.continueAsNewAfterEvents,
    continueAsNewAfterUpdates: input.continueAsNewAfterUpdates,
    backlogHighWaterBytes: input.backlogHighWaterBytes,
    pageBytes: input.pageBytes,
    generation: input.generation + 1,
    ...(ownerEndedAtMs === undefined ? {} : { ownerEndedAtMs }),
    snapshot,
    ...(live ? { live } : {}),
  };
}
