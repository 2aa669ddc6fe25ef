import {
  CloseResult,
  ConversationSummary,
  InteractionAnswer,
  InteractionResolution,
  NotificationDraft,
  PublishReceipt,
  ReceiveResult,
  ReceiverLease,
  sameAnswer,
} from './conversation-schemas';
import { fingerprint } from './bytes';
import {
  ConversationJournalSnapshot,
  rememberedNotificationIds,
  rememberedResolutions,
} from './conversation-journal-state';
import { ErrorKind, KitError, parseInput } from './errors';
import { ConversationId, NotificationId, relatedId } from './ids';
import {
  JournalEntry,
  rememberedResolutionBytes,
  serializedBytes,
  type PagingLimits,
} from './conversation-pages';
import { PagedBacklog } from './paged-backlog';
import { ConversationNotification } from './schemas';

export { JournalEntry } from './conversation-pages';
export {
  ConversationJournalSnapshot,
  rememberedNotificationIds,
  rememberedResolutions,
} from './conversation-journal-state';

/** What a successful resolve did; `firstTime` is false for an idempotent repeat. */
export interface ResolveOutcome {
  resolution: InteractionResolution;
  firstTime: boolean;
  mirroredTo?: ConversationId;
}

type InteractionBody = Extract<ConversationNotification['body'], { type: 'interaction' }>;

const isInteraction = (entry: JournalEntry): boolean => entry.notification.body.type === 'interaction';
const interactionOf = (entry: JournalEntry): InteractionBody | undefined =>
  entry.notification.body.type === 'interaction' ? entry.notification.body : undefined;

/**
 * The durable notification journal of one conversation (SPEC S5.2-S5.6), as a pure state machine: the
 * workflow feeds it messages and the current time, and carries {@link ConversationJournal.snapshot}
 * through continue-as-new.
 *
 * The backlog holds every passive item not yet acknowledged and every interaction not yet resolved,
 * in seq order. A receiver session reads the backlog from its start; receiving item n acknowledges the
 * passive items the session received before it; interactions leave only when resolved.
 *
 * With {@link PagingLimits} the backlog is paged ({@link PagedBacklog}): the snapshot stays bounded by
 * bytes however far the receiver falls behind.
 */
export class ConversationJournal {
  private readonly remembered: Set<string>;
  private resolutionBytes = 0;
  /** The backlog, held here or in pages; the workflow cuts and requests its pages. */
  readonly backlog: PagedBacklog;

  private constructor(
    private readonly state: ConversationJournalSnapshot,
    limits?: PagingLimits,
  ) {
    this.remembered = new Set(state.recentNotificationIds);
    this.backlog = new PagedBacklog(state, limits, () => this.state.lease?.deliveredThrough ?? 0);
    for (const resolution of state.resolutions) this.resolutionBytes += serializedBytes(resolution) + 1;
  }

  /** An empty journal for a new conversation; `limits` turns paging on. */
  static create(conversationId: ConversationId, limits?: PagingLimits): ConversationJournal {
    return new ConversationJournal(
      {
        schemaVersion: 1,
        conversationId,
        lastSeq: 0,
        acknowledgedThrough: 0,
        backlog: [],
        lease: null,
        resolutions: [],
        closed: false,
        refusedAfterClose: 0,
        recentNotificationIds: [],
        spill: [],
        pages: [],
      },
      limits,
    );
  }

  /** Restores a journal from a snapshot (validated: a malformed snapshot is a Protocol error). */
  static fromSnapshot(snapshot: unknown, limits?: PagingLimits): ConversationJournal {
    return new ConversationJournal(
      parseInput(ConversationJournalSnapshot, snapshot, 'journal snapshot'),
      limits,
    );
  }

  get conversationId(): ConversationId {
    return this.state.conversationId;
  }

  get closed(): boolean {
    return this.state.closed;
  }

  /** The state to carry through continue-as-new. */
  snapshot(): ConversationJournalSnapshot {
    return {
      ...this.state,
      backlog: [...this.state.backlog],
      resolutions: [...this.state.resolutions],
      recentNotificationIds: [...this.state.recentNotificationIds],
      lease: this.state.lease && { ...this.state.lease },
      spill: [...this.state.spill],
      pages: this.state.pages.map((page) => ({ ...page })),
    };
  }

  /**
   * Appends drafts with the next seqs. Drafts whose id was already published, and interactions already
   * resolved here, are dropped as duplicates. A closed conversation refuses the whole batch (Closed).
   */
  publish(
    drafts: readonly NotificationDraft[],
    mirroredTo?: ConversationId,
  ): PublishReceipt & { accepted: ConversationNotification[] } {
    if (this.state.closed) {
      this.state.refusedAfterClose += drafts.length;
      throw new KitError(
        ErrorKind.Closed,
        `conversation ${this.state.conversationId} is closed: ${drafts.length} notification(s) refused`,
        { conversationId: this.state.conversationId, refused: drafts.length },
      );
    }
    const accepted: JournalEntry[] = [];
    const ids = new Set<string>();
    let duplicates = 0;
    for (const draft of drafts) {
      const body = draft.body;
      if (
        this.remembered.has(draft.id) ||
        ids.has(draft.id) ||
        (body.type === 'interaction' && this.findResolution(body.requestId))
      ) {
        duplicates++;
        continue;
      }
      ids.add(draft.id);
      const notification: ConversationNotification = {
        id: draft.id,
        conversationId: this.state.conversationId,
        seq: this.state.lastSeq + accepted.length + 1,
        createdAt: draft.createdAt,
        body,
      };
      const mirrorTarget =
        body.type === 'interaction' && mirroredTo && mirroredTo !== this.state.conversationId
          ? mirroredTo
          : undefined;
      accepted.push(mirrorTarget ? { notification, mirroredTo: mirrorTarget } : { notification });
    }
    // SPEC S3.10: a batch past a bound is refused whole (QuotaExceeded), before any of it is admitted.
    const refusal = this.backlog.refusal(this.state.conversationId, accepted);
    if (refusal) throw refusal;
    for (const entry of accepted) {
      this.remember(entry.notification.id);
      this.state.lastSeq = entry.notification.seq;
      this.backlog.append(entry);
    }
    const notifications = accepted.map((entry) => entry.notification);
    return { seqs: notifications.map(({ seq }) => seq), duplicates, accepted: notifications };
  }

  /**
   * Takes the exclusive lease for `receiverId` (S5.3), or renews it when that receiver already holds it.
   * A live lease of another receiver is a Conflict; an expired one is taken over.
   */
  openReceiver(receiverId: string, ttlMs: number, nowMs: number): ReceiverLease {
    const lease = this.state.lease;
    if (lease && lease.receiverId === receiverId) {
      lease.ttlMs = ttlMs;
      lease.expiresAtMs = nowMs + ttlMs;
      return { ...lease };
    }
    if (lease && lease.expiresAtMs > nowMs) {
      throw new KitError(
        ErrorKind.Conflict,
        `conversation ${this.state.conversationId} already has a live receiver (${lease.receiverId}, lease expires in ${lease.expiresAtMs - nowMs} ms): dispose it or wait for its lease to expire`,
        { conversationId: this.state.conversationId, holder: lease.receiverId },
      );
    }
    this.state.lease = { receiverId, ttlMs, expiresAtMs: nowMs + ttlMs, deliveredThrough: 0 };
    return { ...this.state.lease };
  }

  /** Whether a receive by `receiverId` after `afterSeq` would answer now rather than wait. */
  hasNewsFor(receiverId: string, afterSeq: number): boolean {
    if (this.state.lease?.receiverId !== receiverId) return true;
    return (
      (this.state.closed && this.backlog.pageCount === 0) || this.backlog.nextAfter(afterSeq) !== undefined
    );
  }

  /** Extends the lease of its holder; Conflict when `receiverId` no longer holds it. */
  renew(receiverId: string, nowMs: number): ReceiverLease {
    const lease = this.requireLease(receiverId);
    lease.expiresAtMs = nowMs + lease.ttlMs;
    return { ...lease };
  }

  /**
   * The next item after `afterSeq` (the last seq this session received) for the lease holder. Delivering
   * an item, or end-of-stream, acknowledges the passive items at or before `afterSeq` (S5.4).
   */
  receive(receiverId: string, afterSeq: number, nowMs: number): ReceiveResult {
    const lease = this.renew(receiverId, nowMs);
    if (afterSeq > lease.deliveredThrough) {
      throw KitError.protocol(
        `afterSeq: ${afterSeq} was never delivered to receiver ${receiverId} (delivered through ${lease.deliveredThrough})`,
        { fields: ['afterSeq'] },
      );
    }
    const next = this.backlog.nextAfter(afterSeq);
    // Nothing here while the next page loads: `idle`, so the receiver polls again (even when closed).
    if (!next && !(this.state.closed && this.backlog.pageCount === 0)) return { type: 'idle' };
    this.acknowledgeThrough(afterSeq);
    if (!next) return { type: 'end' };
    this.requireLease(receiverId).deliveredThrough = Math.max(lease.deliveredThrough, next.notification.seq);
    return { type: 'notification', notification: next.notification };
  }

  /** Gives the lease up without acknowledging anything (S5.5). False when `receiverId` did not hold it. */
  release(receiverId: string): boolean {
    if (this.state.lease?.receiverId !== receiverId) return false;
    this.state.lease = null;
    return true;
  }

  /** Closes the conversation (idempotent): publishing is refused; receivers drain, then end (S5.6). */
  close(): CloseResult {
    this.state.closed = true;
    return { closed: true, backlogSize: this.backlog.size };
  }

  /**
   * Records the answer to an interaction published here (S5.4). Same request id and answer → the same
   * resolution again; a different answer → Conflict; an answer of the wrong kind → Protocol; a mirror of
   * another conversation's interaction → InvalidState (resolve it at its origin); unknown → NotFound.
   */
  resolve(requestId: string, answer: InteractionAnswer, resolvedAt: string): ResolveOutcome {
    const earlier = this.findResolution(requestId);
    if (earlier) {
      if (earlier.conversationId !== this.state.conversationId) {
        throw this.mirrorError(requestId, earlier.conversationId);
      }
      if (!sameAnswer(earlier.answer, answer)) {
        throw new KitError(
          ErrorKind.Conflict,
          `interaction ${requestId} was already resolved with a different answer`,
          { requestId, resolution: earlier },
        );
      }
      return { resolution: earlier, firstTime: false };
    }
    const entry = this.findInteraction(requestId);
    const interaction = entry && interactionOf(entry);
    if (!entry || !interaction) {
      throw new KitError(
        ErrorKind.NotFound,
        `no interaction ${requestId} in conversation ${this.state.conversationId}`,
        { requestId },
      );
    }
    const origin = relatedId('conversation', interaction.threadId);
    if (origin !== this.state.conversationId) throw this.mirrorError(requestId, origin);
    if (answer.type !== interaction.kind) {
      throw KitError.protocol(
        `answer.type: interaction ${requestId} is ${interaction.kind === 'approval' ? 'an' : 'a'} ${interaction.kind}, so the answer must have type '${interaction.kind}', not '${answer.type}'`,
        { fields: ['answer.type'] },
      );
    }
    const resolution: InteractionResolution = {
      requestId: interaction.requestId,
      threadId: interaction.threadId,
      conversationId: this.state.conversationId,
      seq: entry.notification.seq,
      answer,
      resolvedAt,
    };
    this.backlog.remove(entry);
    this.addResolution(resolution);
    return { resolution, firstTime: true, ...(entry.mirroredTo ? { mirroredTo: entry.mirroredTo } : {}) };
  }

  /** Marks a mirrored interaction answered at its origin: it stops being redelivered here (S5.9). */
  settle(resolution: InteractionResolution): boolean {
    if (this.findResolution(resolution.requestId)) return false;
    this.addResolution(resolution);
    const entry = this.findInteraction(resolution.requestId);
    if (entry) this.backlog.remove(entry);
    return entry !== undefined;
  }

  /** Counts, lease and closed flag for queries. */
  summary(generation: number): ConversationSummary {
    const pendingInteractions = this.backlog.held.filter(isInteraction).length;
    return {
      conversationId: this.state.conversationId,
      lastSeq: this.state.lastSeq,
      acknowledgedThrough: this.state.acknowledgedThrough,
      backlogSize: this.backlog.size,
      pendingInteractions,
      resolvedInteractions: this.state.resolutions.length,
      leaseHolder: this.state.lease ? fingerprint(this.state.lease.receiverId) : null,
      leaseExpiresAtMs: this.state.lease?.expiresAtMs ?? null,
      closed: this.state.closed,
      refusedAfterClose: this.state.refusedAfterClose,
      generation,
      pages: this.backlog.pageCount,
      pagedItems: this.backlog.pagedItems,
    };
  }

  /** Every item still in the backlog, in seq order (for tests and inspection). */
  backlogItems(): ConversationNotification[] {
    return this.backlog.held.map((entry) => entry.notification);
  }

  private requireLease(receiverId: string): ReceiverLease {
    const lease = this.state.lease;
    if (lease?.receiverId === receiverId) return lease;
    throw new KitError(
      ErrorKind.Conflict,
      lease
        ? `receiver ${receiverId} lost the lease of conversation ${this.state.conversationId} to ${lease.receiverId}: open a new receiver`
        : `receiver ${receiverId} does not hold the lease of conversation ${this.state.conversationId} (released or never opened): open a new receiver`,
      { conversationId: this.state.conversationId, holder: lease?.receiverId ?? null },
    );
  }

  /** Acknowledges passive items at or before `seq` (S5.4). */
  private acknowledgeThrough(seq: number): void {
    if (seq <= this.state.acknowledgedThrough) return;
    this.state.acknowledgedThrough = seq;
    this.backlog.acknowledgeThrough(seq);
  }

  /** Interactions are never paged, so one still pending is held here. */
  /** The conversation a held interaction was mirrored to (S5.9), if it was. */
  mirrorOf = (requestId: string): ConversationId | undefined => this.findInteraction(requestId)?.mirroredTo;

  private findInteraction(requestId: string): JournalEntry | undefined {
    return this.backlog.held.find((entry) => interactionOf(entry)?.requestId === requestId);
  }

  private findResolution(requestId: string): InteractionResolution | undefined {
    return this.state.resolutions.find((resolution) => resolution.requestId === requestId);
  }

  /**
   * Remembers a resolution; the oldest are forgotten past the count and the byte bound (S3.10: safe, the
   * answer stands; a re-resolve of a forgotten one is NotFound). One over the byte bound on its own (an
   * answer of 100,000 characters may take 600 KB) is not remembered at all.
   */
  private addResolution(resolution: InteractionResolution): void {
    this.state.resolutions.push(resolution);
    this.resolutionBytes += serializedBytes(resolution) + 1;
    const tooMany = () =>
      this.state.resolutions.length > rememberedResolutions ||
      this.resolutionBytes > rememberedResolutionBytes;
    while (this.state.resolutions.length > 0 && tooMany()) {
      this.resolutionBytes -= serializedBytes(this.state.resolutions.shift()!) + 1;
    }
  }

  private remember(id: NotificationId): void {
    this.remembered.add(id);
    this.state.recentNotificationIds.push(id);
    if (this.state.recentNotificationIds.length > rememberedNotificationIds) {
      const forgotten = this.state.recentNotificationIds.shift();
      if (forgotten) this.remembered.delete(forgotten);
    }
  }

  private mirrorError(requestId: string, origin: string): KitError {
    return new KitError(
      ErrorKind.InvalidState,
      `interaction ${requestId} is a mirror in conversation ${this.state.conversationId}: resolve it at its origin conversation ${origin} (resolveNotification routes there by threadId)`,
      { requestId, originConversationId: origin },
    );
  }
}
