import { ErrorKind, KitError } from './errors';
import {
  clampedLimits,
  JournalEntry,
  maxEntryBytes,
  maxPageRefBytes,
  maxPendingInteractionBytes,
  maxSpillBytes,
  mergeBySeq,
  PageRef,
  serializedBytes,
  takePage,
  type PagingLimits,
} from './conversation-pages';

/** The backlog part of a journal snapshot: items held here, the spill, and page references. */
export interface BacklogState {
  backlog: JournalEntry[];
  spill: JournalEntry[];
  pages: PageRef[];
}

const isInteraction = (entry: JournalEntry): boolean => entry.notification.body.type === 'interaction';
const sumBytes = (entries: readonly JournalEntry[]) =>
  entries.reduce((sum, entry) => sum + serializedBytes(entry), 0);

/** The largest page reference as JSON (ids of 104 characters, seqs of 16 digits, a token), with its comma. */
export const maxPageRefJsonBytes = 280;
/**
 * A burst (one activation's publishes) may take the spill this far past a page, to be cut before the
 * run continues as new: room for a thread's largest publish signal (256 K characters, 768 KiB).
 */
const burstBytes = 1024 * 1024;

/** Where a batch's entries would go, summed, so a batch is refused whole before any of it is admitted. */
interface Tally {
  held: number;
  spill: number;
  interactions: number;
  spilling: boolean;
}

const quota = (message: string, limit: string, value: number) =>
  new KitError(ErrorKind.QuotaExceeded, message, { limit, value });

/**
 * A conversation's backlog in seq order, held partly in its own state and, with {@link PagingLimits},
 * partly in pages (SPEC S5.2, S7.3). Once the items held here pass the high-water mark, new passive items
 * go to the spill, which is cut into pages ({@link cutPage}) for page workflows. When what lies ahead of
 * the receiver here drops below the low-water mark (half the high-water mark), the oldest page is asked
 * for ({@link pageToRequest}) and merged back when it arrives. Nothing at or past the oldest page's first
 * seq is deliverable, so order holds; with no page out, the spill (less than a page) is read in place.
 *
 * Interactions are never paged: resolving and settling one needs its thread, kind and mirror at hand
 * (S5.4, S5.9), and they are few (each waits for a person and times out as denied). One published while
 * paging stays here, behind the pages, and is delivered once the items before it are.
 */
export class PagedBacklog {
  private readonly limits: PagingLimits | undefined;

  /** `readFrom` is the last seq the current receiver got (0 for none): what lies ahead is read next. */
  constructor(
    private readonly state: BacklogState,
    limits: PagingLimits | undefined,
    private readonly readFrom: () => number,
  ) {
    this.limits = limits && clampedLimits(limits);
  }

  /** Every item, wherever it is. */
  get size(): number {
    return this.state.backlog.length + this.state.spill.length + this.pagedItems;
  }

  /** Items held by page workflows. */
  get pagedItems(): number {
    return this.state.pages.reduce((sum, page) => sum + page.count, 0);
  }

  /** The pages nobody has taken back yet, oldest first. */
  get pages(): readonly PageRef[] {
    return this.state.pages;
  }

  get pageCount(): number {
    return this.state.pages.length;
  }

  /** Items held here, in seq order. */
  get held(): readonly JournalEntry[] {
    return this.state.backlog;
  }

  /**
   * SPEC S3.10: why `entries`, appended in order, cannot all be taken now (QuotaExceeded naming the
   * limit), or undefined. Checked before any of a batch is admitted, so a refused batch changes nothing.
   */
  refusal(conversationId: string, entries: readonly JournalEntry[]): KitError | undefined {
    const tally = this.tally();
    for (const entry of entries) {
      const refusal = this.place(tally, entry, conversationId);
      if (refusal instanceof KitError) return refusal;
    }
    return undefined;
  }

  /**
   * Adds the newest item (check {@link refusal} first): behind any spill or page (order), or to the spill
   * once the items held here would pass the high-water mark.
   */
  append(entry: JournalEntry): void {
    const place = this.place(this.tally(), entry, '');
    if (place instanceof KitError) throw place;
    (place === 'spill' ? this.state.spill : this.state.backlog).push(entry);
  }

  /** The first deliverable item with seq > afterSeq: held here, or in the spill when no page is out. */
  nextAfter(afterSeq: number): JournalEntry | undefined {
    const held = firstAfter(this.state.backlog, afterSeq);
    const oldestPage = this.state.pages[0];
    if (oldestPage) return held && held.notification.seq < oldestPage.firstSeq ? held : undefined;
    const spilled = firstAfter(this.state.spill, afterSeq);
    if (!held || !spilled) return held ?? spilled;
    return held.notification.seq < spilled.notification.seq ? held : spilled;
  }

  /** Drops passive items at or before `seq`; interactions stay until resolved. */
  acknowledgeThrough(seq: number): void {
    const backlog = this.state.backlog;
    let end = 0;
    while (end < backlog.length && backlog[end]!.notification.seq <= seq) end++;
    const keptInteractions = backlog.slice(0, end).filter(isInteraction);
    backlog.splice(0, end, ...keptInteractions);
    // The spill holds passive items only; with a page out, none of it was delivered.
    if (this.state.pages.length === 0)
      this.state.spill = this.state.spill.filter((entry) => entry.notification.seq > seq);
  }

  /** Removes an item held here (a resolved or settled interaction). */
  remove(entry: JournalEntry): void {
    const index = this.state.backlog.indexOf(entry);
    if (index >= 0) this.state.backlog.splice(index, 1);
  }

  /** Whether the spill holds a page's worth, for {@link cutPage}. */
  hasPageToCut(): boolean {
    return (
      this.limits !== undefined &&
      this.pageRefBytes() + maxPageRefJsonBytes <= maxPageRefBytes &&
      takePage(this.state.spill, this.limits.pageBytes).length > 0
    );
  }

  /**
   * Cuts the oldest page off the spill once it holds a page's worth, and records it as the newest page
   * under the workflow id `<idPrefix>-page-<firstSeq>-<uniqueSuffix>`, with the `token` that proves its
   * request and delivery (asked only for a page cut). The caller starts a page workflow with the entries
   * and the token, and gives them back with {@link returnPage} if that fails.
   */
  cutPage(
    idPrefix: string,
    uniqueSuffix: string,
    token?: () => string | undefined,
  ): { page: PageRef; entries: JournalEntry[] } | undefined {
    if (!this.limits || !this.hasPageToCut()) return undefined;
    const entries = takePage(this.state.spill, this.limits.pageBytes);
    const first = entries[0]?.notification;
    const last = entries.at(-1)?.notification;
    if (!first || !last) return undefined;
    this.state.spill.splice(0, entries.length);
    const page: PageRef = {
      workflowId: `${idPrefix}-page-${first.seq}-${uniqueSuffix}`,
      firstSeq: first.seq,
      lastSeq: last.seq,
      count: entries.length,
      bytes: sumBytes(entries),
    };
    const proof = token?.();
    if (proof !== undefined) page.token = proof;
    this.state.pages.push(page);
    return { page, entries };
  }

  /** Undoes {@link cutPage} for the newest page (its workflow could not be started). */
  returnPage(page: PageRef, entries: readonly JournalEntry[]): void {
    if (this.state.pages.at(-1)?.workflowId !== page.workflowId) {
      throw new KitError(
        ErrorKind.InvalidState,
        `page ${page.workflowId} is not the newest page: cannot return it`,
      );
    }
    this.state.pages.pop();
    this.state.spill.unshift(...entries);
  }

  /**
   * The page to ask for now: the oldest, once it fits under the low-water mark (half the high-water
   * mark) with the items ahead of the receiver here (deliverable, after what it last got), or once none
   * is ahead. Measured ahead of the receiver, not over all items held, so unresolved interactions or a
   * large unacknowledged item cannot hold pages back forever; and counting the page, so what is held
   * stays bounded (S3.10): the item last delivered and not yet acknowledged, and at most a low-water
   * mark or one page (one notification, when it is larger) ahead of it.
   */
  pageToRequest(): PageRef | undefined {
    const oldest = this.state.pages[0];
    if (!oldest || !this.limits) return undefined;
    let ahead = 0;
    for (const entry of this.state.backlog) {
      const seq = entry.notification.seq;
      if (seq >= oldest.firstSeq) break;
      if (seq > this.readFrom()) ahead += serializedBytes(entry);
    }
    return ahead === 0 || ahead + oldest.bytes <= this.limits.highWaterBytes / 2 ? oldest : undefined;
  }

  /**
   * Takes the oldest page's entries back (only the oldest is ever asked for). A page already taken (a
   * re-sent answer), a delivery for another page, or one that is not that page's (more entries or bytes
   * than it had, or seqs outside it, or without the page's token: anyone may signal) is ignored, as are
   * entries whose seq is already here. False when nothing was taken.
   */
  pageDelivered(pageId: string, entries: readonly JournalEntry[], token?: string): boolean {
    const page = this.state.pages[0];
    if (page?.workflowId !== pageId || page.token !== token) return false;
    const inPage = entries.every(({ notification: { seq } }) => seq >= page.firstSeq && seq <= page.lastSeq);
    if (!inPage || entries.length > page.count || sumBytes(entries) > page.bytes) return false;
    this.state.pages.shift();
    this.state.backlog = mergeBySeq(this.state.backlog, entries);
    return true;
  }

  /** Where `entry` goes (and the tally updated), or why it cannot be taken. */
  private place(tally: Tally, entry: JournalEntry, conversationId: string): 'held' | 'spill' | KitError {
    const size = serializedBytes(entry);
    if (size > maxEntryBytes)
      return quota(
        `a notification may take at most ${maxEntryBytes} bytes as JSON; this one takes ${size}: shorten its text or send it in parts`,
        'notificationBytes',
        maxEntryBytes,
      );
    if (isInteraction(entry)) {
      if (tally.interactions + size > maxPendingInteractionBytes)
        return quota(
          `conversation ${conversationId} already holds ${tally.interactions} bytes of unresolved interactions (limit ${maxPendingInteractionBytes}): resolve some, or wait for them to time out`,
          'pendingInteractionBytes',
          maxPendingInteractionBytes,
        );
      tally.interactions += size;
      tally.held += size;
      return 'held';
    }
    if (!this.limits || (!tally.spilling && tally.held + size <= this.limits.highWaterBytes)) {
      tally.held += size;
      return 'held';
    }
    tally.spilling = true;
    tally.spill += size;
    // Within a page and one notification, the spill may be carried as it is; a burst past that only
    // while the pages it will be cut into have room (so it is cut before the run continues as new).
    const small = maxSpillBytes(this.limits);
    const pagesNeeded = 2 * Math.ceil(tally.spill / this.limits.pageBytes) + 1;
    const roomForPages = this.pageRefBytes() + pagesNeeded * maxPageRefJsonBytes <= maxPageRefBytes;
    if (tally.spill <= small || (tally.spill <= small + burstBytes && roomForPages)) return 'spill';
    return roomForPages
      ? quota(
          `conversation ${conversationId} is paging out ${tally.spill - size} bytes of notifications (limit ${small + burstBytes}): publish again shortly`,
          'spillBytes',
          small + burstBytes,
        )
      : quota(
          `conversation ${conversationId} holds ${this.pageCount} pages of notifications nobody has received (limit ${maxPageRefBytes} bytes of page references): receive them, or publish again later`,
          'pageRefBytes',
          maxPageRefBytes,
        );
  }

  private tally(): Tally {
    const { backlog, spill, pages } = this.state;
    return {
      held: sumBytes(backlog),
      spill: sumBytes(spill),
      interactions: sumBytes(backlog.filter(isInteraction)),
      spilling: pages.length > 0 || spill.length > 0,
    };
  }

  private pageRefBytes(): number {
    return this.state.pages.reduce((sum, page) => sum + serializedBytes(page) + 1, 0);
  }
}

/** The first entry with seq > afterSeq (binary search: entries are in seq order). */
function firstAfter(entries: readonly JournalEntry[], afterSeq: number): JournalEntry | undefined {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (entries[middle]!.notification.seq <= afterSeq) low = middle + 1;
    else high = middle;
  }
  return entries[low];
}
