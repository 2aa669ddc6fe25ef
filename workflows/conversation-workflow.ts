import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import { z } from 'zod';
import { ConversationJournal, ConversationJournalSnapshot } from '../domain/conversation-journal';
import { PageDelivery, type PagingLimits } from '../domain/conversation-pages';
import {
  adoptConversationSignal,
  closeConversationUpdate,
  conversationSummaryQuery,
  interactionSettledSignal,
  openReceiverUpdate,
  pageDeliveredSignal,
  pageRequestSignal,
  publishSignal,
  publishUpdate,
  receiveUpdate,
  releaseReceiverUpdate,
  resolveNotificationUpdate,
} from '../domain/conversation-messages';
import { capabilityRefusal, isSelfOrBelow } from '../domain/capability';
import {
  AdoptConversation,
  ConversationOwner,
  OpenReceiverRequest,
  PublishReceipt,
  PublishRequest,
  ReceiveRequest,
  ReleaseReceiverRequest,
  ResolveNotificationRequest,
  SettleInteraction,
} from '../domain/conversation-schemas';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { ConversationId, newId, relatedId } from '../domain/ids';
import { auditOf } from '../domain/conversation-audit';
import { conversationPageWorkflow } from './conversation-page-workflow';
import { asFailure, guarded } from './failures';
import { KeptTimer } from './kept-timer';

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
     * input (2 MiB limit) bounded however far the receiver falls behind.
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
  })
  .strict();
export type ConversationWorkflowInput = z.input<typeof ConversationWorkflowInput>;

/**
 * The durable notification stream of one conversation (SPEC S5); workflow id = the conversation id.
 * Lives until terminated: its backlog outlives the agent, and continues as new to stay small (S7.3).
 */
export async function conversationWorkflow(rawInput: ConversationWorkflowInput): Promise<void> {
  let input: z.output<typeof ConversationWorkflowInput>;
  let journal: ConversationJournal;
  try {
    input = parseInput(ConversationWorkflowInput, rawInput, 'conversation workflow input');
    const limits: PagingLimits = {
      highWaterBytes: input.backlogHighWaterBytes,
      pageBytes: input.pageBytes,
      mayStart: () => true,
    };
    journal = input.snapshot
      ? ConversationJournal.fromSnapshot(input.snapshot, limits)
      : ConversationJournal.create(input.conversationId, limits);
  } catch (error) {
    throw asFailure(error);
  }
  let handingOver = false;
  let updatesThisRun = 0;
  const receiveTimer = new KeptTimer();

  let owner = input.owner;
  // A receiver may have started this conversation before its thread did: the thread then claims it,
  // once, with a capability of that very thread under the run key it names.
  setHandler(adoptConversationSignal, (raw) => {
    const claim = AdoptConversation.safeParse(raw);
    const valid =
      !owner &&
      claim.success &&
      relatedId('conversation', claim.data.owner.threadId) === input.conversationId &&
      claim.data.from.threadId === claim.data.owner.threadId &&
      capabilityRefusal(claim.data.owner.runKey, claim.data.owner.rootId, claim.data.from) === undefined;
    if (valid) owner = claim.data.owner;
    else log.warn('dropped a conversation claim', { conversationId: input.conversationId });
  });
  /**
   * SPEC S3.9: a thread's conversation takes notifications and settlements only from that thread, or (the
   * root's conversation) from any thread of its tree, proven; throws PermissionDenied otherwise.
   */
  const checkSender = (from: unknown, what: string) => {
    if (!owner) return;
    const refusal =
      from === undefined
        ? `${what}: conversation ${input.conversationId} belongs to thread ${owner.threadId}: send its capability`
        : capabilityRefusal(owner.runKey, owner.rootId, from);
    if (refusal) throw new KitError(ErrorKind.PermissionDenied, refusal);
    if (!isSelfOrBelow(from as SettleInteraction['from'], owner.threadId))
      throw new KitError(
        ErrorKind.PermissionDenied,
        `${what}: only ${owner.threadId} or its descendants may`,
      );
  };

  let ownerEndedAtMs = input.ownerEndedAtMs;
  async function publish(request: PublishRequest): Promise<PublishReceipt> {
    checkSender(request.from, 'publish');
    const { accepted, ...receipt } = journal.publish(request.notifications, request.mirrorInteractionsTo);
    const ownerEnded = accepted.some(
      ({ body }) =>
        body.type === 'status' && body.event === 'thread-end' && body.threadId === owner?.threadId,
    );
    // Its thread's end is the stream's last item: the conversation closes, so receivers drain it and get
    // end-of-stream, which acknowledges it (SPEC S5.6, S5.10).
    if (ownerEnded) {
      ownerEndedAtMs ??= Date.now();
      journal.close();
    }
    const mirrored = accepted.filter((notification) => notification.body.type === 'interaction');
    if (request.mirrorInteractionsTo && mirrored.length > 0) {
      await signalQuietly(request.mirrorInteractionsTo, publishSignal, {
        notifications: mirrored.map(({ id, createdAt, body }) => ({ id, createdAt, body })),
        ...(request.from ? { from: request.from } : {}),
      });
    }
    return receipt;
  }

  setHandler(conversationSummaryQuery, () => journal.summary(input.generation));

  setHandler(publishSignal, async (rawRequest: PublishRequest) => {
    try {
      await publish(parseInput(PublishRequest, rawRequest, 'publish request'));
    } catch (error) {
      log.warn('publish dropped', { conversationId: journal.conversationId, error: String(error) });
    }
  });

  setHandler(
    publishUpdate,
    guarded((request: PublishRequest) => {
      updatesThisRun++;
      return publish(request);
    }),
    {
      validator: guarded((request: PublishRequest) =>
        checkSender(parseInput(PublishRequest, request, 'publish').from, 'publish'),
      ),
    },
  );

  setHandler(
    openReceiverUpdate,
    guarded((request: OpenReceiverRequest) => {
      updatesThisRun++;
      return request.renewOnly
        ? journal.renew(request.receiverId, Date.now())
        : journal.openReceiver(request.receiverId, request.ttlMs, Date.now());
    }),
    {
      validator: guarded(
        (request: OpenReceiverRequest) => void parseInput(OpenReceiverRequest, request, 'open-receiver'),
      ),
    },
  );

  setHandler(
    receiveUpdate,
    guarded(async (request: ReceiveRequest) => {
      updatesThisRun++;
      const lease = journal.renew(request.receiverId, Date.now());
      const waitMs = Math.min(request.waitMs ?? input.receiveWaitMs, Math.floor(lease.ttlMs / 2));
      const ready = () => handingOver || journal.hasNewsFor(request.receiverId, request.afterSeq);
      // One timer serves the long-polls of a busy receiver.
      if (!ready() && waitMs > 0) await receiveTimer.waitUntil(Date.now() + waitMs, ready);
      return journal.receive(request.receiverId, request.afterSeq, Date.now());
    }),
    { validator: guarded((request: ReceiveRequest) => void parseInput(ReceiveRequest, request, 'receive')) },
  );

  setHandler(
    releaseReceiverUpdate,
    guarded((request: ReleaseReceiverRequest) => {
      updatesThisRun++;
      return { released: journal.release(request.receiverId) };
    }),
    {
      validator: guarded(
        (request: ReleaseReceiverRequest) =>
          void parseInput(ReleaseReceiverRequest, request, 'release-receiver'),
      ),
    },
  );

  setHandler(
    closeConversationUpdate,
    guarded(() => {
      updatesThisRun++;
      return journal.close();
    }),
  );

  setHandler(
    resolveNotificationUpdate,
    guarded(async (request: ResolveNotificationRequest) => {
      updatesThisRun++;
      const outcome = journal.resolve(request.requestId, request.answer, new Date().toISOString());
      if (outcome.firstTime && outcome.mirroredTo) {
        await signalQuietly(outcome.mirroredTo, interactionSettledSignal, {
          resolution: outcome.resolution,
        } as SettleInteraction);
      }
      return outcome.resolution;
    }),
    {
      validator: guarded((request: ResolveNotificationRequest) => {
        parseInput(ResolveNotificationRequest, request, 'resolve-notification');
        // SPEC S3.1: a thread's interactions are answered by the thread that asked, not here.
        if (owner)
          throw new KitError(
            ErrorKind.PermissionDenied,
            `conversation ${input.conversationId} belongs to thread ${owner.threadId}: resolve its interactions at that thread (resolveNotification with a capability)`,
          );
      }),
    },
  );

  setHandler(interactionSettledSignal, (raw: SettleInteraction) => {
    try {
      const settle = parseInput(SettleInteraction.partial({ from: true }), raw, 'interaction-settled');
      checkSender(settle.from, 'interaction-settled');
      const before = journal.summary(input.generation).resolvedInteractions;
      journal.settle(settle.resolution);
      // SPEC S5.10: the answer stays in the record, for later receivers too.
      if (journal.summary(input.generation).resolvedInteractions > before)
        journal.publish([
          {
            id: newId('notification', uuid4),
            createdAt: new Date().toISOString(),
            body: auditOf(settle.resolution),
          },
        ]);
    } catch (error) {
      log.warn('interaction-settled dropped', { error: String(error) });
    }
  });

  setHandler(pageDeliveredSignal, (rawDelivery: PageDelivery) => {
    try {
      const delivery = parseInput(PageDelivery, rawDelivery, 'page delivery');
      journal.backlog.pageDelivered(delivery.pageId, delivery.entries);
    } catch (error) {
      log.warn('page delivery dropped', { error: String(error) });
    }
  });

  // Pages asked for in this run. A new run asks again for a page still outstanding: if the page had
  // already answered, its answer reaches this run anyway (signals go to the latest run), and a repeat
  // is ignored by seq.
  const requested = new Set<string>();
  const pageToRequest = () => {
    const page = journal.backlog.pageToRequest();
    return page && !requested.has(page.workflowId) ? page : undefined;
  };
  /** Starts page workflows for a full spill, one at a time (a page that fails to start is given back). */
  async function cutPages(): Promise<void> {
    for (
      let cut = journal.backlog.cutPage(journal.conversationId, uuid4());
      cut;
      cut = journal.backlog.cutPage(journal.conversationId, uuid4())
    ) {
      try {
        await startChild(conversationPageWorkflow, {
          workflowId: cut.page.workflowId,
          args: [{ conversationId: journal.conversationId, entries: cut.entries }],
          // The page outlives this run: the next run (after continue-as-new) reads it.
          parentClosePolicy: ParentClosePolicy.ABANDON,
        });
      } catch (error) {
        journal.backlog.returnPage(cut.page, cut.entries);
        log.warn('page workflow not started', { workflowId: cut.page.workflowId, error: String(error) });
        return;
      }
    }
  }
  async function requestPage(): Promise<void> {
    const page = pageToRequest();
    if (!page) return;
    requested.add(page.workflowId);
    await signalQuietly(page.workflowId, pageRequestSignal);
  }

  const timeToContinue = () =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength >= input.continueAsNewAfterEvents ||
    updatesThisRun >= input.continueAsNewAfterUpdates;
  const pageWork = () => journal.backlog.hasPageToCut() || pageToRequest() !== undefined;
  // SPEC S5.10: once its thread has ended, a thread's conversation completes when its backlog has been
  // read and acknowledged to the end, or when the retention period has passed.
  const retentionLeftMs = () =>
    owner && ownerEndedAtMs !== undefined ? ownerEndedAtMs + owner.retentionMs - Date.now() : Infinity;
  const retired = () =>
    owner !== undefined &&
    ownerEndedAtMs !== undefined &&
    (journal.backlog.size === 0 || retentionLeftMs() <= 0);
  for (;;) {
    // The wait is made again when the owner's end arrives, so its retention timer starts then.
    const endedWhenArmed = ownerEndedAtMs;
    const wake = () => timeToContinue() || pageWork() || retired() || ownerEndedAtMs !== endedWhenArmed;
    if (Number.isFinite(retentionLeftMs())) await condition(wake, Math.max(1, retentionLeftMs()));
    else await condition(wake);
    if (retired()) {
      handingOver = true;
      await condition(allHandlersFinished);
      return;
    }
    if (timeToContinue()) break;
    await cutPages();
    await requestPage();
  }
  // Waiting receives answer `idle` at once, so their clients re-poll the next run.
  handingOver = true;
  await condition(allHandlersFinished);
  // Items published by the last handlers leave in pages, not in the snapshot.
  if (journal.backlog.hasPageToCut()) {
    await cutPages();
    await condition(allHandlersFinished);
  }
  return await continueAsNew<typeof conversationWorkflow>({
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
    snapshot: journal.snapshot(),
  });
}

/** Signals another workflow; a missing or finished target is logged, never fails the caller's update. */
async function signalQuietly<Args extends unknown[]>(
  workflowId: string,
  signal: SignalDefinition<Args>,
  ...args: Args
): Promise<void> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(signal, ...args);
  } catch (error) {
    log.warn('signal not delivered', { workflowId, signal: signal.name, error: String(error) });
  }
}
