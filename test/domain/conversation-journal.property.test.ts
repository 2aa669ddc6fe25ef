import fc from 'fast-check';
import { ConversationJournal } from '../../domain/conversation-journal';
import type { JournalEntry, PagingLimits } from '../../domain/conversation-pages';
import type { NotificationDraft } from '../../domain/conversation-schemas';
import { relatedId } from '../../domain/ids';
import type { ConversationNotification } from '../../domain/schemas';

// Deterministic ids so that shrinking reproduces the same runs.
const hex = (value: number) => value.toString(16).padStart(32, '0');
const threadId = `thread_${hex(1)}` as const;
const conversationId = relatedId('conversation', threadId);

type Action =
  | { type: 'publish'; kinds: ('message' | 'interaction')[] }
  | { type: 'receive' }
  | { type: 'drop' }
  | { type: 'resolve'; pick: number }
  | { type: 'restore' }
  | { type: 'page-work'; answer: boolean; resend: boolean };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    type: fc.constant('publish' as const),
    kinds: fc.array(fc.constantFrom('message' as const, 'message' as const, 'interaction' as const), {
      minLength: 1,
      maxLength: 4,
    }),
  }),
  fc.constant({ type: 'receive' as const }),
  fc.constant({ type: 'receive' as const }),
  fc.constant({ type: 'drop' as const }),
  fc.record({ type: fc.constant('resolve' as const), pick: fc.nat() }),
  fc.constant({ type: 'restore' as const }),
  fc.record({ type: fc.constant('page-work' as const), answer: fc.boolean(), resend: fc.boolean() }),
);

/**
 * The model: a set of published items, which passive ones are acknowledged and which interactions
 * resolved. A session's next item is the lowest seq after its cursor that is neither.
 */
class Model {
  readonly kinds = new Map<number, 'message' | 'interaction'>();
  readonly acknowledged = new Set<number>();
  readonly resolved = new Set<number>();
  next(afterSeq: number): number | undefined {
    return [...this.kinds.keys()]
      .filter((seq) => seq > afterSeq && !this.acknowledged.has(seq) && !this.resolved.has(seq))
      .sort((left, right) => left - right)[0];
  }
}

function runActions(actions: Action[], limits?: PagingLimits): void {
  let journal = ConversationJournal.create(conversationId, limits);
  // The page workflows (they outlive restores, as they outlive continue-as-new), by workflow id.
  const pageStore = new Map<string, JournalEntry[]>();
  let lastAnswered: { pageId: string; entries: JournalEntry[] } | undefined;
  /** What the workflow does: start pages for a full spill; answer the page asked for. */
  const pageWork = (answer: boolean, resend: boolean): boolean => {
    for (let cut = journal.backlog.cutPage(conversationId, String(pageStore.size)); cut;) {
      pageStore.set(cut.page.workflowId, cut.entries);
      cut = journal.backlog.cutPage(conversationId, String(pageStore.size));
    }
    if (resend && lastAnswered)
      expect(journal.backlog.pageDelivered(lastAnswered.pageId, lastAnswered.entries)).toBe(false);
    const page = journal.backlog.pageToRequest();
    if (!answer || !page) return false;
    lastAnswered = { pageId: page.workflowId, entries: pageStore.get(page.workflowId)! };
    return journal.backlog.pageDelivered(lastAnswered.pageId, lastAnswered.entries);
  };
  const model = new Model();
  let published = 0;
  let session = 0;
  let cursor = 0;
  let deliveredThisSession: number[] = [];
  const lastOfDroppedSessions = new Set<number>();
  const everDelivered = new Set<number>();
  const open = () => journal.openReceiver(`receiver-${++session}`, 1_000, 0);
  open();

  const receive = (): ConversationNotification | undefined => {
    const expected = model.next(cursor);
    let result = journal.receive(`receiver-${session}`, cursor, 0);
    // While a page is out the receiver waits (idle); the page arrives and it receives again.
    while (result.type === 'idle' && pageWork(true, false))
      result = journal.receive(`receiver-${session}`, cursor, 0);
    if (result.type !== 'notification') {
      expect(expected).toBeUndefined();
      return undefined;
    }
    const seq = result.notification.seq;
    // Order kept, and the journal agrees with the model on what comes next.
    expect(seq).toBe(expected);
    expect(seq).toBeGreaterThan(cursor);
    const repeated = everDelivered.has(seq);
    if (repeated && model.kinds.get(seq) === 'message') {
      // Only the item a dropped receiver had last received (unacknowledged) is ever repeated.
      expect(lastOfDroppedSessions.has(seq)).toBe(true);
    }
    for (const earlier of model.kinds.keys()) {
      if (earlier <= cursor && model.kinds.get(earlier) === 'message') model.acknowledged.add(earlier);
    }
    everDelivered.add(seq);
    deliveredThisSession.push(seq);
    cursor = seq;
    return result.notification;
  };

  /** The receiver goes away without acknowledging its last item; a new one takes the lease. */
  const drop = () => {
    const last = deliveredThisSession.at(-1);
    if (last !== undefined) lastOfDroppedSessions.add(last);
    journal.release(`receiver-${session}`);
    open();
    cursor = 0;
    deliveredThisSession = [];
  };

  for (const step of actions) {
    if (step.type === 'publish') {
      const drafts: NotificationDraft[] = step.kinds.map((kind) => {
        published++;
        const id = `notification_${hex(published)}` as const;
        const body =
          kind === 'message'
            ? { type: 'message' as const, text: String(published) }
            : {
                type: 'interaction' as const,
                requestId: `request_${hex(published)}` as const,
                threadId,
                kind: 'approval' as const,
                prompt: 'ok?',
              };
        return { id, createdAt: 'now', body };
      });
      const { seqs } = journal.publish(drafts);
      seqs.forEach((seq, index) => model.kinds.set(seq, step.kinds[index]!));
    } else if (step.type === 'receive') {
      receive();
    } else if (step.type === 'drop') {
      drop();
    } else if (step.type === 'resolve') {
      const pending = [...model.kinds.entries()]
        .filter(([seq, kind]) => kind === 'interaction' && !model.resolved.has(seq) && everDelivered.has(seq))
        .map(([seq]) => seq);
      const seq = pending[step.pick % Math.max(1, pending.length)];
      if (seq === undefined) continue;
      journal.resolve(`request_${hex(seq)}`, { type: 'approval', approved: true }, 'now');
      model.resolved.add(seq);
    } else if (step.type === 'page-work') {
      pageWork(step.answer, step.resend);
    } else {
      journal = ConversationJournal.fromSnapshot(JSON.parse(JSON.stringify(journal.snapshot())), limits);
    }
  }

  // Nothing lost: a fresh receiver gets every unacknowledged message and every unresolved interaction.
  drop();
  const outstanding = [...model.kinds.keys()].filter(
    (seq) => !model.acknowledged.has(seq) && !model.resolved.has(seq),
  );
  const drained: number[] = [];
  for (let item = receive(); item; item = receive()) drained.push(item.seq);
  expect(drained).toEqual(outstanding.sort((left, right) => left - right));
  for (const seq of model.kinds.keys()) {
    if (!drained.includes(seq)) expect(everDelivered.has(seq)).toBe(true);
  }
  expect(journal.summary(0).lastSeq).toBe(published);
}

test('the journal agrees with a simple model: order kept, nothing lost, only unacknowledged items repeat', () => {
  fc.assert(
    fc.property(fc.array(action, { maxLength: 60 }), (actions) => runActions(actions)),
    { numRuns: 300 },
  );
});

test('paged into pages of ~2 items past ~3 items held, the journal still agrees with the model', () => {
  // A message entry weighs ~190 bytes.
  const limits: PagingLimits = { highWaterBytes: 600, pageBytes: 400 };
  fc.assert(
    fc.property(fc.array(action, { maxLength: 80 }), (actions) => runActions(actions, limits)),
    { numRuns: 500 },
  );
});

test('interactions are redelivered to every new receiver until resolved', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 5 }), (sessions, messages) => {
      const journal = ConversationJournal.create(conversationId);
      journal.publish([
        {
          id: `notification_${hex(1)}`,
          createdAt: 'now',
          body: {
            type: 'interaction',
            requestId: `request_${hex(1)}`,
            threadId,
            kind: 'question',
            prompt: '?',
          },
        },
        ...Array.from({ length: messages }, (_, index) => ({
          id: `notification_${hex(index + 2)}` as const,
          createdAt: 'now',
          body: { type: 'message' as const, text: 'm' },
        })),
      ]);
      for (let session = 1; session <= sessions; session++) {
        journal.openReceiver(`receiver-${session}`, 1_000, 0);
        let cursor = 0;
        const seen: number[] = [];
        for (
          let result = journal.receive(`receiver-${session}`, cursor, 0);
          result.type === 'notification';
        ) {
          seen.push(result.notification.seq);
          cursor = result.notification.seq;
          result = journal.receive(`receiver-${session}`, cursor, 0);
        }
        expect(seen[0]).toBe(1);
        journal.release(`receiver-${session}`);
      }
      journal.resolve(`request_${hex(1)}`, { type: 'question', text: 'answer' }, 'now');
      journal.openReceiver('after', 1_000, 0);
      const result = journal.receive('after', 0, 0);
      expect(result.type === 'notification' ? result.notification.seq : undefined).not.toBe(1);
    }),
  );
});
