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
  /** `readFrom` is the last seq the current receiver got (0 for none): what lies ahead is read next. */
  constructor(
    private readonly state: BacklogState,
    private readonly limits: PagingLimits | undefined,
    private readonly readFrom: () => number,
  ) {}

  /** Every item, wherever it is. */
  get size(): number {
    return this.state.backlog.length + this.state.spill.length + this.pagedItems;
  }

  /** Items held by page workflows. */
  get pagedItems(): number {
    return this.state.pages.reduce((sum, page) => sum + page.count, 0);
  }

  get pageCount(): number {
    return this.state.pages.length;
  }

  /** Items held here, in seq order. */
  get held(): readonly JournalEntry[] {
    return this.state.backlog;
  }

  /** Adds the newest item: behind any spill or page (order), or to the spill past the high-water mark. */
  append(entry: JournalEntry): void {
    const spilling =
      this.limits &&
      !isInteraction(entry) &&
      (this.state.pages.length > 0 ||
        this.state.spill.length > 0 ||
        (this.heldBytes() >= this.limits.highWaterBytes && (this.limits.mayStart?.() ?? true)));
    (spilling ? this.state.spill : this.state.backlog).push(entry);
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

  /**
   * The page to ask for now: the oldest, once the items ahead of the receiver here (deliverable, after
   * what it last got) weigh less than the low-water mark. Measured ahead of the receiver, not over all
   * items held, so unresolved interactions or a large unacknowledged item cannot hold pages back forever.
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
    return ahead < this.limits.highWaterBytes / 2 ? oldest : undefined;
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
    return true;
  }

  private heldBytes(): number {
    return this.state.backlog.reduce((sum, entry) => sum + serializedBytes(entry), 0);
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
