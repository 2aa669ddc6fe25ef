import { ErrorKind, KitError } from './errors';
import {
  JournalEntry,
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

/**
 * A conversation's backlog in seq order, held partly in its own state and, with {@link PagingLimits},
 * partly in pages (SPEC S5.2, S7.3). Once the items held here pass the high-water mark, new passive items
 * go to the spill, which is cut into pages ({@link cutPage}) for page workflows; when the deliverable
 * items drain below the low-water mark (half the high-water mark) the oldest page is asked for
 * ({@link pageToRequest}) and merged back when it arrives; with no page left the spill comes back.
 * Nothing at or past the oldest paged seq is deliverable, so order holds.
 *
 * Interactions are never paged: resolving and settling one needs its thread, kind and mirror at hand
 * (S5.4, S5.9), and they are few (each waits for a person and times out as denied). One published while
 * paging stays here, behind the pages, and is delivered once the items before it are.
 */
export class PagedBacklog {
  constructor(
    private readonly state: BacklogState,
    private readonly limits?: PagingLimits,
  ) {}

  /** Every item, wherever it is. */
  get size(): number {
    return this.state.backlog.length + this.pagedItems;
  }

  /** Items not held here: in the spill or in pages. */
  get pagedItems(): number {
    return this.state.spill.length + this.state.pages.reduce((sum, page) => sum + page.count, 0);
  }

  get pageCount(): number {
    return this.state.pages.length;
  }

  /** Items held here, in seq order. */
  get held(): readonly JournalEntry[] {
    return this.state.backlog;
  }

  /** Whether nothing is paged out (so an empty read here is the end of the backlog). */
  get allHeld(): boolean {
    return this.state.pages.length === 0 && this.state.spill.length === 0;
  }

  /** Adds the newest item: behind any spill or page (order), or to the spill past the high-water mark. */
  append(entry: JournalEntry): void {
    const spilling =
      this.limits &&
      !isInteraction(entry) &&
      (!this.allHeld || this.heldBytes(Infinity) >= this.limits.highWaterBytes);
    (spilling ? this.state.spill : this.state.backlog).push(entry);
    this.refill();
  }

  /** The first deliverable item with seq > afterSeq (binary search: the backlog is in seq order). */
  nextAfter(afterSeq: number): JournalEntry | undefined {
    const backlog = this.state.backlog;
    let low = 0;
    let high = backlog.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (backlog[middle]!.notification.seq <= afterSeq) low = middle + 1;
      else high = middle;
    }
    const next = backlog[low];
    return next && next.notification.seq < this.pagedFrom() ? next : undefined;
  }

  /** Drops passive items at or before `seq`; interactions stay until resolved. */
  acknowledgeThrough(seq: number): void {
    const backlog = this.state.backlog;
    let end = 0;
    while (end < backlog.length && backlog[end]!.notification.seq <= seq) end++;
    const keptInteractions = backlog.slice(0, end).filter(isInteraction);
    backlog.splice(0, end, ...keptInteractions);
    this.refill();
  }

  /** Removes an item held here (a resolved or settled interaction). */
  remove(entry: JournalEntry): void {
    const index = this.state.backlog.indexOf(entry);
    if (index >= 0) this.state.backlog.splice(index, 1);
    this.refill();
  }

  /** Whether the spill holds a page's worth, for {@link cutPage}. */
  hasPageToCut(): boolean {
    return this.limits !== undefined && takePage(this.state.spill, this.limits.pageBytes).length > 0;
  }

  /**
   * Cuts the oldest page off the spill once it holds a page's worth, and records it as the newest page
   * under the workflow id `<idPrefix>-page-<firstSeq>-<uniqueSuffix>`. The caller starts a page workflow
   * with the entries, and gives them back with {@link returnPage} if that fails.
   */
  cutPage(idPrefix: string, uniqueSuffix: string): { page: PageRef; entries: JournalEntry[] } | undefined {
    if (!this.limits) return undefined;
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
      bytes: entries.reduce((sum, entry) => sum + serializedBytes(entry), 0),
    };
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

  /** The page to ask for now: the oldest, once the deliverable items are below the low-water mark. */
  pageToRequest(): PageRef | undefined {
    const oldest = this.state.pages[0];
    return oldest && this.belowLowWater() ? oldest : undefined;
  }

  /**
   * Takes a page's entries back. A page already taken (a re-sent answer) is ignored, as are entries whose
   * seq is already here. False when nothing was taken.
   */
  pageDelivered(pageId: string, entries: readonly JournalEntry[]): boolean {
    const index = this.state.pages.findIndex((page) => page.workflowId === pageId);
    if (index < 0) return false;
    this.state.pages.splice(index, 1);
    this.state.backlog = mergeBySeq(this.state.backlog, entries);
    this.refill();
    return true;
  }

  /** With no pages left, the spill comes back here once the deliverable items are below the low-water mark. */
  private refill(): void {
    if (this.state.pages.length > 0 || this.state.spill.length === 0 || !this.belowLowWater()) return;
    this.state.backlog = mergeBySeq(this.state.backlog, this.state.spill);
    this.state.spill = [];
  }

  /** The lowest seq not held here (oldest page, else spill): nothing at or past it is deliverable yet. */
  private pagedFrom(): number {
    return this.state.pages[0]?.firstSeq ?? this.state.spill[0]?.notification.seq ?? Infinity;
  }

  private belowLowWater(): boolean {
    return this.limits !== undefined && this.heldBytes(this.pagedFrom()) < this.limits.highWaterBytes / 2;
  }

  /** Bytes of the items held here with seq below `beforeSeq`. */
  private heldBytes(beforeSeq: number): number {
    let bytes = 0;
    for (const entry of this.state.backlog) {
      if (entry.notification.seq >= beforeSeq) break;
      bytes += serializedBytes(entry);
    }
    return bytes;
  }
}
