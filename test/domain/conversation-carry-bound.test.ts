// SPEC S3.10: the largest continue-as-new input a conversation can build, computed from the real journal
// filled through its public API (as the workflow drives it) to every bound at once with the worst texts
// (a control character takes 6 bytes as JSON), stays under `carriedInputBudgetBytes`, part by part.
import { randomUUID } from 'node:crypto';
import { jsonBytes } from '../../domain/bytes';
import { carriedInputBudgetBytes, inputLimitBytes } from '../../domain/carry-bounds';
import { ConversationJournal, rememberedNotificationIds } from '../../domain/conversation-journal';
import {
  maxEntryBytes,
  maxHighWaterBytes,
  maxPageRefBytes,
  maxPendingInteractionBytes,
  maxSpillBytes,
  rememberedResolutionBytes,
  type JournalEntry,
} from '../../domain/conversation-pages';
import type { InteractionResolution, NotificationDraft } from '../../domain/conversation-schemas';
import { KitError } from '../../domain/errors';
import { LiveOutput, maxLiveCarryBytes, maxLiveChunkChars, maxLiveTextChars } from '../../domain/live-output';
import type { NotificationBody } from '../../domain/schemas';
import {
  continuationOf,
  ConversationWorkflowInput,
  pagingLimitsOf,
} from '../../workflows/conversation-input';
import { id, worst } from '../helpers/worst-case';

const rootId = id('thread', 1);
const conversationId = id('conversation', 1);
const receiverId = 'r'.repeat(200);
let drafts = 0;
const draft = (body: NotificationBody): NotificationDraft => ({
  id: id('notification', ++drafts),
  createdAt: worst(64),
  body,
});
const message = (characters: number) => draft({ type: 'message', text: worst(characters) });
const interaction = (promptCharacters: number, toolCharacters = 1_000) =>
  draft({
    type: 'interaction',
    requestId: id('request', drafts + 1),
    threadId: id('thread', 2),
    kind: 'question',
    prompt: worst(promptCharacters),
    ...(toolCharacters > 0 ? { tool: { name: worst(200), input: { path: worst(toolCharacters) } } } : {}),
    expiresAt: worst(64),
  });
/** The longest message text whose entry (at seqs of 16 digits) takes at most `bytes` as JSON. */
const charactersFor = (bytes: number) =>
  Math.floor((bytes - jsonBytes({ notification: { ...message(0), conversationId, seq: 2 ** 53 } })) / 6);

const bytesOf = (entries: readonly unknown[]) => jsonBytes(entries);
const isInteraction = (entry: JournalEntry) => entry.notification.body.type === 'interaction';

/** The entries of the page workflows started, by workflow id. */
const pageWorkflows = new Map<string, JournalEntry[]>();

/** Publishes as the workflow does (refused batches throw), then cuts every page the spill holds. */
function publish(journal: ConversationJournal, batch: NotificationDraft[], mirror?: boolean): void {
  journal.publish(batch, mirror ? id('conversation', 3) : undefined);
  for (let cut = journal.backlog.cutPage(conversationId, randomUUID()); cut;) {
    pageWorkflows.set(cut.page.workflowId, cut.entries);
    cut = journal.backlog.cutPage(conversationId, randomUUID());
  }
}

/** Publishes `make()` until refused; returns the refusal's limit, after checking it changed nothing. */
function fillUntilRefused(journal: ConversationJournal, make: () => NotificationDraft, mirror?: boolean) {
  for (;;) {
    const before = JSON.stringify(journal.snapshot());
    try {
      publish(journal, [make()], mirror);
    } catch (error) {
      expect(KitError.is(error) && error.kind).toBe('QuotaExceeded');
      expect(JSON.stringify(journal.snapshot())).toBe(before);
      return (error as KitError).details as { limit: string };
    }
  }
}

test("a conversation's largest continue-as-new input stays under the budget", () => {
  const input = ConversationWorkflowInput.parse({
    conversationId,
    owner: {
      rootId,
      threadId: id('thread', 999),
      // The deepest lineage a grant allows.
      lineage: [rootId, ...Array.from({ length: 63 }, (_, index) => id('thread', 1_000 + index))],
      runKey: 'a'.repeat(64),
      retentionMs: 365 * 24 * 3_600_000,
    },
    receiveWaitMs: 300_000,
    continueAsNewAfterEvents: 40_000,
    continueAsNewAfterUpdates: 1_900,
    // Larger than takes effect: clamped to `maxHighWaterBytes`.
    backlogHighWaterBytes: 1_024 * 1_024,
    pageBytes: 256 * 1_024,
    generation: Number.MAX_SAFE_INTEGER - 1,
  });
  const limits = pagingLimitsOf(input);
  // A conversation that has published nearly as much as a seq can count, so seqs take 16 digits.
  const empty = ConversationJournal.create(conversationId).snapshot();
  const start = Number.MAX_SAFE_INTEGER - 10_000_000;
  const journal = ConversationJournal.fromSnapshot({ ...empty, lastSeq: start }, limits);
  const now = 1e15;
  journal.openReceiver(receiverId, 3_600_000, now);

  // Notification ids remembered for duplicates: as many as kept, all received and acknowledged.
  for (let n = 0; n < rememberedNotificationIds; n += 500)
    publish(
      journal,
      Array.from({ length: 500 }, () => message(0)),
    );
  let cursor = 0;
  const receive = () => {
    const result = journal.receive(receiverId, cursor, now);
    if (result.type === 'notification') cursor = result.notification.seq;
    return result.type;
  };
  const deliverPage = () => {
    const page = journal.backlog.pageToRequest();
    return (
      page !== undefined &&
      journal.backlog.pageDelivered(page.workflowId, pageWorkflows.get(page.workflowId)!)
    );
  };
  while (receive() === 'notification' || deliverPage()) {
    /* read to the end, pages and all */
  }
  expect(journal.summary(0)).toMatchObject({ backlogSize: 1, pages: 0 });

  // Held: the largest notification delivered and not acknowledged, and one page (the largest
  // notification) ahead of it, brought back because nothing else was ahead.
  const biggest = () => message(charactersFor(maxEntryBytes));
  publish(journal, [biggest()]);
  const last = journal.summary(0).lastSeq;
  while (cursor < last) expect(receive() === 'notification' || deliverPage()).toBe(true);
  publish(journal, [biggest()]);
  const page = journal.backlog.pageToRequest()!;
  expect(page).toBeDefined();
  expect(journal.backlog.pageDelivered(page.workflowId, pageWorkflows.get(page.workflowId)!)).toBe(true);
  const held = journal.snapshot().backlog;
  expect(held).toHaveLength(2);

  // Pages nobody reads until their references are at their bound (each page half a page and a bit, so
  // they take fewer bytes to make), then the spill full: passive notifications are refused.
  const halfPage = () => message(charactersFor(limits.pageBytes / 2 + 8));
  const pages = () => journal.snapshot().pages.length;
  for (let cut = -1; cut !== pages();) {
    cut = pages();
    publish(journal, [halfPage()]);
  }
  expect(journal.backlog.pageToRequest()).toBeUndefined();
  expect(fillUntilRefused(journal, biggest)).toEqual({ limit: 'pageRefBytes', value: maxPageRefBytes });
  expect(fillUntilRefused(journal, () => message(0)).limit).toBe('pageRefBytes');

  // Unresolved interactions (mirrored here from other threads' conversations) up to their bound.
  expect(fillUntilRefused(journal, () => interaction(10_000), true).limit).toBe('pendingInteractionBytes');
  expect(fillUntilRefused(journal, () => interaction(0, 0), true).limit).toBe('pendingInteractionBytes');

  // Resolutions remembered, the oldest forgotten past the byte bound.
  for (let n = 0; n < 200; n++) {
    const resolution: InteractionResolution = {
      requestId: id('request', 1e6 + n),
      threadId: id('thread', 2),
      conversationId: id('conversation', 2),
      seq: Number.MAX_SAFE_INTEGER,
      answer: { type: 'question', text: worst(1_000) },
      resolvedAt: worst(100),
      resolvedBy: { threadId: id('thread', 2), name: worst(42) },
    };
    journal.settle(resolution);
  }
  journal.close();

  const snapshot = journal.snapshot();
  // The live output of a call in flight (SPEC S10.1), as long and as costly to encode as it can be.
  const live = new LiveOutput();
  const lone = '\ud800'.repeat(maxLiveChunkChars);
  for (let offset = 0; offset < maxLiveTextChars; offset += lone.length)
    live.write({
      from: input.owner!.runKey as never,
      call: { turn: 1, step: 0, attempt: 1 },
      offset,
      text: lone,
    });
  const parsed = ConversationWorkflowInput.parse(
    continuationOf(input, {
      owner: input.owner,
      ownerEndedAtMs: Number.MAX_SAFE_INTEGER,
      snapshot,
      live: live.snapshot(),
    }),
  );
  const { backlog, spill, pages: refs, resolutions, recentNotificationIds, lease, ...counters } = snapshot;
  const passive = backlog.filter((entry) => !isInteraction(entry));
  const interactions = backlog.filter(isInteraction);
  const parts = { passive, interactions, spill, pages: refs, resolutions, recentNotificationIds, lease };
  const rows = Object.entries({ ...parts, counters, owner: input.owner, live: parsed.live }).map(
    ([part, value]) => `  ${part.padEnd(22)} ${jsonBytes(value)}`,
  );
  const total = jsonBytes(parsed);
  process.stdout.write(
    `conversation (${refs.length} pages, ${interactions.length} interactions): ${total} bytes (budget ${carriedInputBudgetBytes}, limit ${inputLimitBytes})\n${rows.join('\n')}\n`,
  );

  expect(bytesOf(passive)).toBeLessThanOrEqual(
    maxEntryBytes + Math.max(maxHighWaterBytes / 2, maxEntryBytes) + 3,
  );
  expect(bytesOf(passive)).toBeGreaterThan(2 * maxEntryBytes - 1_000);
  expect(bytesOf(interactions)).toBeLessThanOrEqual(maxPendingInteractionBytes + interactions.length + 1);
  expect(bytesOf(interactions)).toBeGreaterThan(maxPendingInteractionBytes - 2_000);
  expect(bytesOf(spill)).toBeLessThanOrEqual(maxSpillBytes(limits) + spill.length + 1);
  expect(bytesOf(spill)).toBeGreaterThan(maxSpillBytes(limits) - 1_000);
  expect(bytesOf(refs)).toBeLessThanOrEqual(maxPageRefBytes);
  expect(bytesOf(refs)).toBeGreaterThan(maxPageRefBytes - 1_000);
  expect(bytesOf(resolutions)).toBeLessThanOrEqual(rememberedResolutionBytes);
  expect(recentNotificationIds).toHaveLength(rememberedNotificationIds);
  expect(jsonBytes(parsed.live)).toBeGreaterThan(maxLiveCarryBytes - 100);
  expect(total).toBeLessThan(carriedInputBudgetBytes);
});

test('a page delivery that is not the oldest page, or not its entries, is ignored', () => {
  const journal = ConversationJournal.create(conversationId, { highWaterBytes: 1_024, pageBytes: 512 });
  const pages: { id: string; entries: JournalEntry[] }[] = [];
  for (let n = 0; n < 20; n++) {
    journal.publish([draft({ type: 'message', text: 'x'.repeat(200) })]);
    for (let cut = journal.backlog.cutPage(conversationId, String(n)); cut; cut = undefined)
      pages.push({ id: cut.page.workflowId, entries: cut.entries });
  }
  const [oldest, next] = pages;
  const forged = oldest!.entries.map((entry) => ({
    ...entry,
    notification: { ...entry.notification, body: { type: 'message' as const, text: 'y'.repeat(5_000) } },
  }));
  expect(journal.backlog.pageDelivered(next!.id, next!.entries)).toBe(false);
  expect(journal.backlog.pageDelivered(oldest!.id, forged)).toBe(false);
  expect(journal.backlog.pageDelivered(oldest!.id, [...oldest!.entries, ...next!.entries])).toBe(false);
  expect(journal.backlog.pageDelivered(oldest!.id, oldest!.entries)).toBe(true);
});
