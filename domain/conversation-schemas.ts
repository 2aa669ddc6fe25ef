import { z } from 'zod';
import { jsonBytes } from './bytes';
import { Capability, RunKey } from './capability';
import { ConversationId, matching, NotificationId, RequestId, ThreadId } from './ids';
import { ConversationNotification, NotificationBody, RetentionMs } from './schemas';

/** The answer to an interaction (SPEC S5.4); its `type` must match the interaction's `kind`. */
export const InteractionAnswer = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('approval'),
      approved: z.boolean(),
      reason: z.string().max(10_000).optional(),
      /**
       * SPEC S11.4: "always allow": later calls of this tool anywhere in the tree run without asking,
       * and those waiting are released. Only with `approved: true`, for a tool call, by the root's capability.
       */
      remember: z.literal(true).optional(),
    })
    .strict(),
  z.object({ type: z.literal('question'), text: z.string().min(1).max(100_000) }).strict(),
]);
export type InteractionAnswer = z.infer<typeof InteractionAnswer>;

/** Whether two answers say the same (a repeated resolve with it is idempotent). */
export function sameAnswer(left: InteractionAnswer, right: InteractionAnswer): boolean {
  if (left.type === 'approval' && right.type === 'approval') {
    return (
      left.approved === right.approved &&
      (left.reason ?? null) === (right.reason ?? null) &&
      left.remember === right.remember
    );
  }
  if (left.type === 'question' && right.type === 'question') return left.text === right.text;
  return false;
}

/** Who holds (or asks for) a conversation's lease: one receiver session, chosen by the receiver. */
export const ReceiverId = matching(
  /^[A-Za-z0-9_.:-]{1,200}$/,
  'expected 1-200 characters of A-Z, a-z, 0-9, _ . : -',
);
export type ReceiverId = z.infer<typeof ReceiverId>;

/** A notification as its publisher writes it: the conversation assigns `seq` and `conversationId`. */
export const NotificationDraft = z
  .object({ id: NotificationId, createdAt: z.string().min(1).max(64), body: NotificationBody })
  .strict();
export type NotificationDraft = z.infer<typeof NotificationDraft>;

/** A batch of notifications for one conversation; interactions may also be mirrored to the root's (S5.9). */
export const PublishRequest = z
  .object({
    notifications: z.array(NotificationDraft).min(1).max(1000),
    mirrorInteractionsTo: ConversationId.optional(),
    /** The publisher's capability: required by a thread's conversation (SPEC S3.9), not by a standalone one. */
    from: Capability.optional(),
  })
  .strict();
export type PublishRequest = z.infer<typeof PublishRequest>;

/**
 * SPEC S3.9: why a proven publisher may not publish these items, or undefined. An item that names a
 * thread (an interaction, a status) speaks for that thread: only the thread itself may publish it, except
 * a `child-spawned` status, which a parent publishes of its new child. Without it, any thread of a tree
 * could put into the root's conversation approvals "of" another thread that nobody can answer.
 */
export function misattributed(request: PublishRequest): string | undefined {
  const publisher = request.from?.threadId;
  if (publisher === undefined) return undefined;
  const other = request.notifications.find(({ body }) => {
    const named = 'threadId' in body ? body.threadId : undefined;
    return (
      named !== undefined &&
      named !== publisher &&
      !(body.type === 'status' && body.event === 'child-spawned')
    );
  });
  if (!other) return undefined;
  return `publish: notification ${other.id} speaks for another thread than its publisher ${publisher}`;
}

/** What a publish did: the seq of each newly accepted draft, and how many were already published (by id). */
export const PublishReceipt = z
  .object({ seqs: z.array(z.number().int().min(1)), duplicates: z.number().int().min(0) })
  .strict();
export type PublishReceipt = z.infer<typeof PublishReceipt>;

/** Take (or renew) the conversation's exclusive lease (S5.3); `renewOnly` never takes a lost lease back. */
export const OpenReceiverRequest = z
  .object({
    receiverId: ReceiverId,
    ttlMs: z.number().int().min(100).max(3_600_000),
    renewOnly: z.boolean().optional(),
    /** SPEC S3.9: a thread's conversation is read only with the capability of that thread or an ancestor. */
    from: Capability.optional(),
  })
  .strict();
export type OpenReceiverRequest = z.infer<typeof OpenReceiverRequest>;

/** The exclusive lease of one receiver session and how far that session has been delivered. */
export const ReceiverLease = z
  .object({
    receiverId: ReceiverId,
    ttlMs: z.number().int().min(1),
    expiresAtMs: z.number().int(),
    deliveredThrough: z.number().int().min(0),
  })
  .strict();
export type ReceiverLease = z.infer<typeof ReceiverLease>;

/**
 * Long-poll for the next item after `afterSeq`, the last seq this receiver session actually received
 * (0 before the first). Sending the cursor makes a retried receive return the same item, never skip one.
 */
export const ReceiveRequest = z
  .object({
    receiverId: ReceiverId,
    afterSeq: z.number().int().min(0),
    waitMs: z.number().int().min(0).max(300_000).optional(),
    from: Capability.optional(),
  })
  .strict();
export type ReceiveRequest = z.infer<typeof ReceiveRequest>;

/** A receive's answer: the next item, nothing yet (poll again), or end-of-stream (closed and drained). */
export const ReceiveResult = z.discriminatedUnion('type', [
  z.object({ type: z.literal('notification'), notification: ConversationNotification }).strict(),
  z.object({ type: z.literal('idle') }).strict(),
  z.object({ type: z.literal('end') }).strict(),
]);
export type ReceiveResult = z.infer<typeof ReceiveResult>;

/** Give up the lease without acknowledging the last item received (S5.5). */
export const ReleaseReceiverRequest = z
  .object({ receiverId: ReceiverId, from: Capability.optional() })
  .strict();
export type ReleaseReceiverRequest = z.infer<typeof ReleaseReceiverRequest>;

/** Close a conversation (S5.6); a thread's conversation takes it only from that thread or an ancestor. */
export const CloseConversationRequest = z.object({ from: Capability.optional() }).strict();
export type CloseConversationRequest = z.infer<typeof CloseConversationRequest>;

/** Answer an interaction recorded in this conversation (S5.4). */
export const ResolveNotificationRequest = z
  .object({ requestId: RequestId, answer: InteractionAnswer })
  .strict();
export type ResolveNotificationRequest = z.infer<typeof ResolveNotificationRequest>;

/** A person's or a service's name in the audit trail: at most 200 characters and 256 bytes as JSON. */
export const ResolverName = z
  .string()
  .min(1)
  .max(200)
  .refine((name) => jsonBytes(name) <= 256, 'a name may take at most 256 bytes as JSON');

/** Who answered an interaction (SPEC S5.10's audit trail): the proven thread, and a name it gave. */
export const Resolver = z.object({ threadId: ThreadId, name: ResolverName.optional() }).strict();
export type Resolver = z.infer<typeof Resolver>;

/** SPEC S5.4: the answer to one of a thread's interactions, sent to that thread's workflow. */
export const ResolveInteractionRequest = z
  .object({
    requestId: RequestId,
    answer: InteractionAnswer,
    /** Who answers, for the audit trail (a person's or a service's name). */
    name: ResolverName.optional(),
  })
  .strict();
export type ResolveInteractionRequest = z.infer<typeof ResolveInteractionRequest>;

/** The authoritative record of an answered interaction; resolving again with the same answer returns it. */
export const InteractionResolution = z
  .object({
    requestId: RequestId,
    threadId: ThreadId,
    conversationId: ConversationId,
    /** The interaction's seq in its origin conversation; absent when the agent settled it itself (timeout). */
    seq: z.number().int().min(1).optional(),
    answer: InteractionAnswer,
    resolvedAt: z.string().max(100),
    /** Who gave the answer; absent when nobody did (it timed out as denied). */
    resolvedBy: Resolver.optional(),
    /** SPEC S11.4: nobody answered; the tree's approval policy let the call through, for this reason. */
    byPolicy: z.enum(['never-ask', 'remembered', 'not-needed']).optional(),
  })
  .strict();
export type InteractionResolution = z.infer<typeof InteractionResolution>;

/** How many resolutions a thread remembers across continue-as-new, to answer a repeated resolve. */
export const maxRememberedResolutions = 100;

/** A resolution as a thread remembers it: the answer only as a fingerprint (a repeat carries it again). */
export const RememberedResolution = z
  .object({
    resolution: InteractionResolution.omit({ answer: true }),
    answerType: z.enum(['approval', 'question']),
    answerFingerprint: z.string().max(64),
  })
  .strict();
export type RememberedResolution = z.infer<typeof RememberedResolution>;

/**
 * The answer a question nobody answered settles with (it timed out, or its turn or thread ended first):
 * empty text, which no person's answer has (the kernel that asked gets it as is).
 */
export const UnansweredQuestion = z.object({ type: z.literal('question'), text: z.literal('') }).strict();
export const isUnansweredQuestion = (answer: { type: string; text?: string }): boolean =>
  answer.type === 'question' && answer.text === '';

/**
 * The answer an interaction nobody answered settles with: an approval denied for `reason`, a question
 * with no text ({@link UnansweredQuestion}).
 */
export const unansweredAnswer = (kind: 'approval' | 'question', reason: string): InteractionAnswer =>
  kind === 'approval' ? { type: 'approval', approved: false, reason } : { type: 'question', text: '' };

/**
 * A resolution as a conversation keeps it: given by a person or a policy, or — for a question — settled
 * unanswered (patch `unansweredQuestionsSettle`; before it such a settle was dropped as malformed and
 * the question stayed pending in both conversations for good).
 */
export const SettledResolution = InteractionResolution.extend({
  answer: z.union([InteractionAnswer, UnansweredQuestion]),
});
export type SettledResolution = z.infer<typeof SettledResolution>;

/** Thread → its conversation (and the root's, for a mirror): an interaction is settled (proven). */
export const SettleInteraction = z
  .object({
    from: Capability,
    resolution: SettledResolution,
    /**
     * The thread leaves the root's mirror to its conversation, which made it (SPEC S5.9; patch
     * `mirrorSettledByConversation`): the conversation forwards the settle. Carried in the signal, so a
     * conversation replays the same decision whatever code its thread ran.
     */
    settleMirror: z.literal(true).optional(),
  })
  .strict();
export type SettleInteraction = z.infer<typeof SettleInteraction>;

/**
 * The thread a conversation belongs to, and its run's key: such a conversation takes notifications and
 * settlements only with a proof from that thread (or, for the root's conversation, any of the tree).
 */
export const ConversationOwner = z
  .object({
    rootId: ThreadId,
    threadId: ThreadId,
    /** The thread's ancestors, the root first: they may read and close its conversation (SPEC S3.9). */
    lineage: z.array(ThreadId).max(64).optional(),
    runKey: RunKey,
    /** SPEC S5.10: how long it is kept once its thread has ended and its backlog is not read to the end. */
    retentionMs: RetentionMs,
  })
  .strict();
export type ConversationOwner = z.infer<typeof ConversationOwner>;

/**
 * Thread → its conversation, when a receiver started the conversation before the thread did: the
 * thread claims it (once), proving the claim with its capability under the run key it names.
 */
export const AdoptConversation = z.object({ owner: ConversationOwner, from: Capability }).strict();
export type AdoptConversation = z.infer<typeof AdoptConversation>;

/** Read-only view of a conversation for tests and the CLI. */
export const ConversationSummary = z
  .object({
    conversationId: ConversationId,
    lastSeq: z.number().int().min(0),
    acknowledgedThrough: z.number().int().min(0),
    backlogSize: z.number().int().min(0),
    pendingInteractions: z.number().int().min(0),
    resolvedInteractions: z.number().int().min(0),
    /**
     * A fingerprint of the lease holder's receiver id (the first 16 hex digits of its SHA-256), not the
     * id itself: whoever knows the id can receive as the holder, and a summary is readable by anyone.
     */
    leaseHolder: z.string().nullable(),
    leaseExpiresAtMs: z.number().int().nullable(),
    closed: z.boolean(),
    refusedAfterClose: z.number().int().min(0),
    generation: z.number().int().min(0),
    /** Page workflows holding part of the backlog (counted in `backlogSize`). */
    pages: z.number().int().min(0).optional(),
    /** Backlog items held by page workflows rather than the conversation workflow itself. */
    pagedItems: z.number().int().min(0).optional(),
    /** The thread whose conversation it is; null while none has claimed it (a receiver started it first). */
    owner: ThreadId.nullable().optional(),
  })
  .strict();
export type ConversationSummary = z.infer<typeof ConversationSummary>;

/** What closing did: the conversation is closed and this many items remain to be drained. */
export const CloseResult = z
  .object({ closed: z.literal(true), backlogSize: z.number().int().min(0) })
  .strict();
export type CloseResult = z.infer<typeof CloseResult>;
