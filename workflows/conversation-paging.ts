import {
  type ChildWorkflowHandle,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  patched,
  setHandler,
  startChild,
  uuid4,
} from '@temporalio/workflow';
import type { ConversationJournal } from '../domain/conversation-journal';
import { pageDeliveredSignal, pageRequestSignal } from '../domain/conversation-messages';
import { PageDelivery, type PageRef } from '../domain/conversation-pages';
import { parseInput } from '../domain/errors';
import { conversationPageWorkflow } from './conversation-page-workflow';
import { patches } from './patches';
import { signalQuietly } from './signal-quietly';
import { dropReasonOf, signalDropped } from './workflow-metrics';

/**
 * A conversation's side of its page workflows (SPEC S5.2, S7.3): starts a page for each page's worth of
 * spill, asks the oldest back when the backlog drains, and takes its delivery. Requests and deliveries
 * carry the page's token (patch `pageTokens`, SPEC S3.9): a forged one changes nothing. Registers the
 * delivery signal's handler.
 */
export class ConversationPaging {
  /**
   * Pages asked for in this run. A new run asks again for a page still outstanding: if the page had
   * already answered, its answer reaches this run anyway (signals go to the latest run), and a repeat is
   * ignored by seq.
   */
  private readonly requested = new Set<string>();
  /** Pages this run started and has not asked for: one it asks for ends after answering, in this run. */
  private readonly startedHere = new Map<string, ChildWorkflowHandle<typeof conversationPageWorkflow>>();
  /** The page whose request this run delivered (only the oldest is asked for), and pages it awaits the end of. */
  private asked: string | undefined;
  private readonly ending = new Set<string>();

  constructor(private readonly journal: ConversationJournal) {
    setHandler(pageDeliveredSignal, (rawDelivery: PageDelivery) => {
      try {
        const delivery = parseInput(PageDelivery, rawDelivery, 'page delivery');
        if (!journal.backlog.pageDelivered(delivery.pageId, delivery.entries, delivery.token))
          signalDropped(pageDeliveredSignal.name, 'refused', 'page delivery ignored', {
            pageId: delivery.pageId,
          });
      } catch (error) {
        signalDropped(pageDeliveredSignal.name, dropReasonOf(error), 'page delivery dropped', {
          error: String(error),
        });
      }
    });
  }

  /** The oldest page, when it is time to ask for it and it has not been asked in this run. */
  pageToRequest(): PageRef | undefined {
    const page = this.journal.backlog.pageToRequest();
    return page && !this.requested.has(page.workflowId) ? page : undefined;
  }

  /**
   * Page traffic of this run still to come: the answer of the page it asked for, or the end of a page it
   * started and asked for. Either arriving while the run continues as new would fail that workflow task
   * (UnhandledCommand): its replay from the start refuses every update and signal meanwhile.
   */
  inFlight(): boolean {
    const oldest = this.journal.backlog.pages[0];
    return (oldest !== undefined && oldest.workflowId === this.asked) || this.ending.size > 0;
  }

  /** Traffic in flight, or a page due to be asked for. */
  traffic(): boolean {
    return this.inFlight() || this.pageToRequest() !== undefined;
  }

  /**
   * Starts page workflows for a full spill (`most` of them at most), one at a time; false when one failed
   * to (it is given back).
   */
  async cutPages(most = Infinity): Promise<boolean> {
    const { backlog, conversationId } = this.journal;
    const token = () => (patched(patches.pageTokens) ? uuid4() : undefined);
    for (let started = 0; started < most; started += 1) {
      const cut = backlog.cutPage(conversationId, uuid4(), token);
      if (!cut) break;
      const proof = cut.page.token;
      try {
        const child = await startChild(conversationPageWorkflow, {
          workflowId: cut.page.workflowId,
          args: [{ conversationId, entries: cut.entries, ...(proof ? { token: proof } : {}) }],
          // The page outlives this run: the next run (after continue-as-new) reads it.
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
        this.startedHere.set(cut.page.workflowId, child);
      } catch (error) {
        backlog.returnPage(cut.page, cut.entries);
        log.warn('page workflow not started', { workflowId: cut.page.workflowId, error: String(error) });
        return false;
      }
    }
    return true;
  }

  /**
   * SPEC S5.10: the conversation retires (its retention passed) with pages nobody read: each page is
   * asked to cancel, so it ends instead of waiting for good (patch `retiredPagesEnd`).
   */
  async discard(): Promise<void> {
    const pages = this.journal.backlog.pages;
    if (pages.length === 0 || !patched(patches.retiredPagesEnd)) return;
    await Promise.all(
      pages.map(({ workflowId }) =>
        getExternalWorkflowHandle(workflowId)
          .cancel()
          .catch((error: unknown) => log.warn('page not cancelled', { workflowId, error: String(error) })),
      ),
    );
  }

  /** Asks the oldest page for its entries, when it is time to. */
  async requestPage(): Promise<void> {
    const page = this.pageToRequest();
    if (!page) return;
    const { workflowId } = page;
    this.requested.add(workflowId);
    if (!(await signalQuietly(workflowId, pageRequestSignal, ...(page.token ? [{ token: page.token }] : []))))
      return;
    this.asked = workflowId;
    const child = this.startedHere.get(workflowId);
    if (!child) return;
    this.startedHere.delete(workflowId);
    this.ending.add(workflowId);
    const ended = () => void this.ending.delete(workflowId);
    void child.result().then(ended, ended);
  }
}
