import { randomUUID } from 'node:crypto';
import { ConversationJournal, rememberedResolutions } from '../../domain/conversation-journal';
import { rememberedResolutionBytes, type PageRef, type PagingLimits } from '../../domain/conversation-pages';
import type { NotificationDraft } from '../../domain/conversation-schemas';
import { newId, relatedId } from '../../domain/ids';
import type { JournalEntry } from '../../domain/conversation-pages';

const threadId = newId('thread', randomUUID);
const conversationId = relatedId('conversation', threadId);
const at = '2025-01-01T00:00:00.000Z';
// A message entry weighs ~190 bytes: the high-water mark holds ~10 of them, a page ~5.
const limits: PagingLimits = { highWaterBytes: 2_000, pageBytes: 1_000 };

const message = (text: string): NotificationDraft => ({
  id: newId('notification', randomUUID),
  createdAt: at,
  body: { type: 'message', text },
});
const approval = (): NotificationDraft => ({
  id: newId('notification', randomUUID),
  createdAt: at,
  body: {
    type: 'interaction',
    requestId: newId('request', randomUUID),
    threadId,
    kind: 'approval',
    prompt: 'run rm?',
  },
});
const messages = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => message(String(from + index)));
const bytes = (value: unknown) => JSON.stringify(value).length;

/** What the workflow does with a journal: page workflows are kept here, keyed by workflow id. */
class PageHost {
  readonly pages = new Map<string, JournalEntry[]>();
  started = 0;
  cutAll(journal: ConversationJournal): void {
    for (let cut = journal.backlog.cutPage(conversationId, String(this.started)); cut;) {
      this.started++;
      this.pages.set(cut.page.workflowId, cut.entries);
      cut = journal.backlog.cutPage(conversationId, String(this.started));
    }
  }
  /** Answers the page the journal asks for, if any; true when one was delivered. */
  answer(journal: ConversationJournal): boolean {
    const page = journal.backlog.pageToRequest();
    if (!page) return false;
    return journal.backlog.pageDelivered(page.workflowId, this.pages.get(page.workflowId)!);
  }
}

/** Receives every deliverable item, letting `host` answer page requests whenever the receiver is idle. */
function receiveAll(journal: ConversationJournal, host: PageHost, receiverId = 'receiver'): number[] {
  const seqs: number[] = [];
  for (;;) {
    const result = journal.receive(receiverId, seqs.at(-1) ?? 0, 0);
    if (result.type === 'notification') seqs.push(result.notification.seq);
    else if (!host.answer(journal)) return seqs;
  }
}

test('past the high-water mark passive items are paged out: the snapshot stays bounded however many are published', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  const host = new PageHost();
  for (let first = 0; first < 5_000; first += 100) {
    journal.publish(messages(first, 100));
    host.cutAll(journal);
    const { backlog, spill, pages } = journal.snapshot();
    // The high-water mark, passed by at most one entry (~190 bytes) and the JSON commas.
    expect(bytes(backlog)).toBeLessThan(limits.highWaterBytes + 250);
    expect(bytes(spill)).toBeLessThan(limits.pageBytes);
    expect(pages.length).toBe(host.pages.size);
  }
  for (const entries of host.pages.values())
    expect(bytes(entries)).toBeLessThanOrEqual(limits.pageBytes + 10);
  expect(journal.summary(0)).toMatchObject({ backlogSize: 5_000, pages: host.pages.size });
  expect(journal.summary(0).pagedItems).toBeGreaterThan(4_900);

  journal.openReceiver('receiver', 1_000, 0);
  expect(receiveAll(journal, host)).toEqual(Array.from({ length: 5_000 }, (_, index) => index + 1));
  expect(journal.summary(0)).toMatchObject({ pages: 0, pagedItems: 0 });
});

test('a receiver waits (idle) while the next page is out, then continues in order; a re-sent page changes nothing', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  const host = new PageHost();
  journal.publish(messages(0, 40));
  host.cutAll(journal);
  journal.openReceiver('receiver', 1_000, 0);
  const seqs: number[] = [];
  for (let result = journal.receive('receiver', 0, 0); result.type === 'notification';) {
    seqs.push(result.notification.seq);
    result = journal.receive('receiver', result.notification.seq, 0);
  }
  expect(seqs.length).toBeGreaterThan(0);
  expect(seqs.length).toBeLessThan(40);
  const page = journal.backlog.pageToRequest()!;
  expect(page.firstSeq).toBe(seqs.length + 1);
  expect(journal.receive('receiver', seqs.at(-1)!, 0)).toEqual({ type: 'idle' });

  expect(journal.backlog.pageDelivered(page.workflowId, host.pages.get(page.workflowId)!)).toBe(true);
  expect(journal.backlog.pageDelivered(page.workflowId, host.pages.get(page.workflowId)!)).toBe(false);
  const rest = receiveAll(journal, host);
  expect([...seqs.slice(0, -1), ...rest]).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
});

test('a spill smaller than a page is read in place: no page workflow is needed', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  journal.publish(messages(0, 12)); // just past the high-water mark: the last ones spill
  expect(journal.snapshot().spill.length).toBeGreaterThan(0);
  expect(journal.backlog.hasPageToCut()).toBe(false);
  journal.openReceiver('receiver', 1_000, 0);
  expect(receiveAll(journal, new PageHost())).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
  expect(journal.summary(0)).toMatchObject({ pages: 0, pagedItems: 0, backlogSize: 1 });
});

test('an interaction published behind pages is never paged: resolvable at once, delivered in its place', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  const host = new PageHost();
  journal.publish(messages(0, 30));
  const [late, later] = [approval(), approval()];
  journal.publish([late, message('after'), later]);
  host.cutAll(journal);
  expect(journal.summary(0)).toMatchObject({ backlogSize: 33, pendingInteractions: 2 });

  const requestId = (draft: NotificationDraft) =>
    draft.body.type === 'interaction' ? draft.body.requestId : '';
  const resolution = journal.resolve(requestId(late), { type: 'approval', approved: true }, at);
  expect(resolution).toMatchObject({ firstTime: true, resolution: { seq: 31 } });
  expect(journal.summary(0)).toMatchObject({ backlogSize: 32, pendingInteractions: 1 });

  journal.openReceiver('receiver', 1_000, 0);
  const seqs = receiveAll(journal, host);
  expect(seqs).toEqual([...Array.from({ length: 30 }, (_, index) => index + 1), 32, 33]);
});

test('a closed conversation ends its receiver only after the paged items are delivered', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  const host = new PageHost();
  journal.publish(messages(0, 30));
  host.cutAll(journal);
  journal.close();
  journal.openReceiver('receiver', 1_000, 0);
  let cursor = 0;
  let result = journal.receive('receiver', cursor, 0);
  const seen: string[] = [];
  while (result.type !== 'end') {
    if (result.type === 'notification') cursor = result.notification.seq;
    else expect(host.answer(journal)).toBe(true);
    seen.push(result.type);
    result = journal.receive('receiver', cursor, 0);
  }
  expect(seen.filter((type) => type === 'notification')).toHaveLength(30);
  expect(seen).toContain('idle');
});

test('a page whose workflow could not start goes back to the spill, in order', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  journal.publish(messages(0, 20));
  const cut = journal.backlog.cutPage(conversationId, 'x')!;
  expect(journal.summary(0).pages).toBe(1);
  journal.backlog.returnPage(cut.page, cut.entries);
  expect(journal.summary(0)).toMatchObject({ pages: 0, backlogSize: 20 });
  journal.openReceiver('receiver', 1_000, 0);
  expect(receiveAll(journal, new PageHost())).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
});

test('a snapshot from before paging (no spill, no pages) still restores, with paging on', () => {
  const old = ConversationJournal.create(conversationId);
  old.publish(messages(0, 3));
  const { spill: _spill, pages: _pages, ...snapshot } = old.snapshot();
  const restored = ConversationJournal.fromSnapshot(JSON.parse(JSON.stringify(snapshot)), limits);
  expect(restored.snapshot()).toMatchObject({ schemaVersion: 1, spill: [], pages: [] as PageRef[] });
  restored.openReceiver('receiver', 1_000, 0);
  expect(receiveAll(restored, new PageHost())).toEqual([1, 2, 3]);
});

test('with paging on, remembered resolutions are bounded by bytes as well as by count', () => {
  const journal = ConversationJournal.create(conversationId, limits);
  const longReason = 'x'.repeat(5_000);
  for (let index = 0; index < 200; index++) {
    const draft = approval();
    journal.publish([draft]);
    if (draft.body.type !== 'interaction') throw new Error('approval expected');
    journal.resolve(draft.body.requestId, { type: 'approval', approved: false, reason: longReason }, at);
  }
  const { resolutions } = journal.snapshot();
  expect(bytes(resolutions)).toBeLessThanOrEqual(rememberedResolutionBytes);
  expect(resolutions.length).toBeLessThan(200);
  expect(resolutions.length).toBeLessThanOrEqual(rememberedResolutions);
});
