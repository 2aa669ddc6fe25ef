import { allHandlersFinished, condition, continueAsNew, patched, setHandler } from '@temporalio/workflow';
import { ConversationJournal } from '../domain/conversation-journal';
import { ConversationPaging } from './conversation-paging';
import {
  adoptConversationSignal,
  closeConversationUpdate,
  conversationSummaryQuery,
  interactionSettledSignal,
  openReceiverUpdate,
  publishSignal,
  publishUpdate,
  receiveUpdate,
  releaseReceiverUpdate,
  resolveNotificationUpdate,
} from '../domain/conversation-messages';
import { capabilityRefusal, isSelfOrBelow, type Capability } from '../domain/capability';
import {
  AdoptConversation,
  CloseConversationRequest,
  misattributed,
  OpenReceiverRequest,
  PublishReceipt,
  PublishRequest,
  ReceiveRequest,
  ReleaseReceiverRequest,
  ResolveNotificationRequest,
  SettleInteraction,
} from '../domain/conversation-schemas';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { relatedId } from '../domain/ids';
import { checkUpdateBytes, maxPublishUpdateBytes } from '../domain/answer-bounds';
import {
  continuationOf,
  ConversationWorkflowInput,
  pagingLimitsOf,
  type ParsedConversationInput,
} from './conversation-input';
import { guarded } from './failures';
import { patches } from './patches';
import { checkRunsAs, startFailure, workflowInput } from './workflow-input';
import { KeptTimer } from './kept-timer';
import { registerLiveOutput } from './live-output-handlers';
import { PollSlots } from './poll-slots';
import { RunLifetime } from './run-lifetime';
import { signalQuietly } from './signal-quietly';
import { checkOwnerlessReader, claimRefused, withheldFrom, type OwnerlessView } from './ownerless-readers';
import { continuingAsNew, dropReasonOf, signalDropped } from './workflow-metrics';
import { registerSettlements } from './conversation-settlements';
import { endsThread, settleLeftInteractions } from './conversation-owner-end';

export { ConversationWorkflowInput } from './conversation-input';

/**
 * The durable notification stream of one conversation (SPEC S5); workflow id = the conversation id.
 * Lives until terminated: its backlog outlives the agent, and continues as new to stay small (S7.3).
 */
export async function conversationWorkflow(rawInput: ConversationWorkflowInput): Promise<void> {
  let input: ParsedConversationInput;
  let journal: ConversationJournal;
  try {
    input = workflowInput(ConversationWorkflowInput, rawInput, 'conversation workflow input');
    checkRunsAs(input.conversationId, 'conversation');
    const limits = pagingLimitsOf(input);
    journal = input.snapshot
      ? ConversationJournal.fromSnapshot(input.snapshot, limits)
      : ConversationJournal.create(input.conversationId, limits);
  } catch (error) {
    throw startFailure(error);
  }
  let handingOver = false;
  const lifetime = new RunLifetime(input.continueAsNewAfterEvents, input.continueAsNewAfterUpdates);
  const receiveTimer = new KeptTimer();
  const slots = new PollSlots();

  let owner = input.owner;
  /** SPEC S3.9: what a reader proving a capability may read here while no thread owns it. */
  const ownerless: OwnerlessView = {
    conversationId: input.conversationId,
    owned: () => owner !== undefined,
    touched: () => {
      const { lastSeq, closed } = journal.summary(input.generation);
      return lastSeq > 0 || closed;
    },
  };
  // A receiver may have started this conversation before its thread did: the thread then claims it,
  // once, with a capability of that very thread under the run key it names.
  setHandler(adoptConversationSignal, (raw) => {
    const claim = AdoptConversation.safeParse(raw);
    const valid =
      !owner &&
      claim.success &&
      relatedId('conversation', claim.data.owner.threadId) === input.conversationId &&
      claim.data.from.threadId === claim.data.owner.threadId &&
      capabilityRefusal(claim.data.owner.runKey, claim.data.owner.rootId, claim.data.from) === undefined &&
      !claimRefused(ownerless);
    if (valid) {
      owner = claim.data.owner;
      // A lease taken before the claim without a proof the owner accepts ends, unacknowledged (S5.5):
      // its receiver must prove itself (SPEC S3.9).
      const holder = journal.snapshot().lease?.receiverId;
      if (holder && readerRefusal(holderProof, 'receive')) journal.release(holder);
    } else
      signalDropped(
        adoptConversationSignal.name,
        !claim.success ? 'malformed' : owner ? 'refused' : 'unproven',
        'dropped a conversation claim',
        { conversationId: input.conversationId },
      );
  });
  /**
   * SPEC S3.9: a thread's conversation takes notifications and settlements only from that thread, or (the
   * root's conversation) from any thread of its tree, proven; throws PermissionDenied otherwise.
   * `workflowOnly`: what only a thread's own workflow sends (settlements, live output), not a service
   * holding its delegated capability.
   */
  const checkSender = (from: unknown, what: string, workflowOnly = false) => {
    if (!owner) return;
    const refusal =
      from === undefined
        ? `${what}: conversation ${input.conversationId} belongs to thread ${owner.threadId}: send its capability`
        : capabilityRefusal(owner.runKey, owner.rootId, from, workflowOnly);
    if (refusal) throw new KitError(ErrorKind.PermissionDenied, refusal);
    if (!isSelfOrBelow(from as SettleInteraction['from'], owner.threadId))
      throw new KitError(
        ErrorKind.PermissionDenied,
        `${what}: only ${owner.threadId} or its descendants may`,
      );
  };

  /**
   * SPEC S3.9: a thread's conversation is read, acknowledged and closed only by that thread or one of
   * its ancestors (the backend holds the root's capability), proven: why `from` may not, or undefined.
   */
  const readerRefusal = (from: unknown, what: string): string | undefined => {
    if (!owner) return undefined;
    if (from === undefined)
      return `${what}: conversation ${input.conversationId} belongs to thread ${owner.threadId}: send the capability of that thread or an ancestor`;
    const refusal = capabilityRefusal(owner.runKey, owner.rootId, from);
    if (refusal) return refusal;
    const caller = (from as Capability).threadId;
    if (caller !== owner.threadId && owner.lineage && !owner.lineage.includes(caller))
      return `${what}: only ${owner.threadId} or its ancestors may`;
    return undefined;
  };
  const checkReader = (from: unknown, what: string) => {
    const refusal = readerRefusal(from, what);
    if (refusal) throw new KitError(ErrorKind.PermissionDenied, refusal);
  };
  /** The proof the lease holder opened with, while nobody owns the conversation (see the claim). */
  let holderProof: unknown;
  // SPEC S10.1: the text its thread's model calls are generating, for watchers.
  const live = registerLiveOutput({
    conversationId: input.conversationId,
    snapshot: input.live,
    ownerThreadId: () => owner?.threadId,
    checkSender,
    checkReader,
    slots,
    lifetime,
    handingOver: () => handingOver,
    ownerEnded: () => ownerEndedAtMs !== undefined,
    waitMs: input.receiveWaitMs,
  });

  let ownerEndedAtMs = input.ownerEndedAtMs;
  async function publish(request: PublishRequest): Promise<PublishReceipt> {
    checkSender(request.from, 'publish');
    const forged = owner ? misattributed(request) : undefined;
    if (forged && patched(patches.publisherSpeaksForItself))
      throw new KitError(ErrorKind.PermissionDenied, forged);
    // What its thread left pending when its end arrives from its workflow (or its root, for it): settled
    // before the end, the stream's last item (SPEC S5.9, S5.10).
    const workflowSpoke = (from: Capability | undefined): from is Capability =>
      from !== undefined && capabilityRefusal(owner!.runKey, owner!.rootId, from, true) === undefined;
    const mirrorSettles =
      owner &&
      ownerEndedAtMs === undefined &&
      endsThread(request, owner.threadId) &&
      workflowSpoke(request.from)
        ? settleLeftInteractions(journal, owner.threadId)
        : [];
    const { accepted, ...receipt } = journal.publish(request.notifications, request.mirrorInteractionsTo);
    const ownerEnded = owner !== undefined && endsThread({ notifications: accepted }, owner.threadId);
    // Its thread's end is the stream's last item: the conversation closes, so receivers drain it and get
    // end-of-stream, which acknowledges it (SPEC S5.6, S5.10).
    if (ownerEnded) {
      ownerEndedAtMs ??= Date.now();
      journal.close();
      live.threadEnded();
    }
    const mirrored = accepted.filter((notification) => notification.body.type === 'interaction');
    if (request.mirrorInteractionsTo && mirrored.length > 0) {
      await signalQuietly(request.mirrorInteractionsTo, publishSignal, {
        notifications: mirrored.map(({ id, createdAt, body }) => ({ id, createdAt, body })),
        ...(request.from ? { from: request.from } : {}),
      });
    }
    await Promise.all(mirrorSettles.map((send) => send(request.from!)));
    return receipt;
  }

  setHandler(conversationSummaryQuery, () => ({
    ...journal.summary(input.generation),
    owner: owner?.threadId ?? null,
  }));

  const publishQuietly = async (rawRequest: unknown) => {
    try {
      await publish(parseInput(PublishRequest, rawRequest, 'publish request'));
    } catch (error) {
      signalDropped(publishSignal.name, dropReasonOf(error), 'publish dropped', {
        conversationId: journal.conversationId,
        error: String(error),
      });
    }
  };
  // Its thread's first notifications came with its start (a signal, an action, less per thread); taken
  // before any publish signal that arrived with it.
  if (input.first && !input.snapshot) void publishQuietly(input.first);
  setHandler(publishSignal, publishQuietly);

  setHandler(
    publishUpdate,
    guarded((request: PublishRequest) => {
      lifetime.count();
      return publish(request);
    }),
    {
      validator: guarded((request: PublishRequest) => {
        const parsed = parseInput(PublishRequest, request, 'publish');
        checkSender(parsed.from, 'publish');
        const forged = owner ? misattributed(parsed) : undefined;
        if (forged) throw new KitError(ErrorKind.PermissionDenied, forged);
        checkUpdateBytes(request, 'publish', maxPublishUpdateBytes);
      }),
    },
  );

  setHandler(
    openReceiverUpdate,
    guarded((request: OpenReceiverRequest) => {
      lifetime.count();
      if (request.renewOnly) return journal.renew(request.receiverId, Date.now());
      const lease = journal.openReceiver(request.receiverId, request.ttlMs, Date.now());
      holderProof = request.from;
      return lease;
    }),
    {
      validator: guarded((request: OpenReceiverRequest) => {
        const { from } = parseInput(OpenReceiverRequest, request, 'open-receiver');
        checkReader(from, 'open-receiver');
        checkOwnerlessReader(ownerless, from, 'open-receiver');
      }),
    },
  );

  setHandler(
    receiveUpdate,
    guarded((request: ReceiveRequest) =>
      slots.hold(async () => {
        lifetime.count();
        const lease = journal.renew(request.receiverId, Date.now());
        const waitMs = Math.min(request.waitMs ?? input.receiveWaitMs, Math.floor(lease.ttlMs / 2));
        const ready = () => handingOver || journal.hasNewsFor(request.receiverId, request.afterSeq);
        // One timer serves the long-polls of a busy receiver.
        if (!ready() && waitMs > 0) await receiveTimer.waitUntil(Date.now() + waitMs, ready);
        if (withheldFrom(ownerless, request.from)) return { type: 'idle' as const };
        return journal.receive(request.receiverId, request.afterSeq, Date.now());
      }),
    ),
    {
      validator: guarded((request: ReceiveRequest) => {
        const { from } = parseInput(ReceiveRequest, request, 'receive');
        checkReader(from, 'receive');
        checkOwnerlessReader(ownerless, from, 'receive');
        slots.check('receive');
      }),
    },
  );

  setHandler(
    releaseReceiverUpdate,
    guarded((request: ReleaseReceiverRequest) => {
      lifetime.count();
      return { released: journal.release(request.receiverId) };
    }),
    {
      validator: guarded((request: ReleaseReceiverRequest) =>
        checkReader(parseInput(ReleaseReceiverRequest, request, 'release-receiver').from, 'release-receiver'),
      ),
    },
  );

  setHandler(
    closeConversationUpdate,
    guarded(() => {
      lifetime.count();
      return journal.close();
    }),
    {
      validator: guarded((request?: CloseConversationRequest) =>
        checkReader(parseInput(CloseConversationRequest, request ?? {}, 'close-conversation').from, 'close'),
      ),
    },
  );

  setHandler(
    resolveNotificationUpdate,
    guarded(async (request: ResolveNotificationRequest) => {
      lifetime.count();
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
        checkUpdateBytes(request, 'resolve-notification');
        // SPEC S3.1: a thread's interactions are answered by the thread that asked, not here.
        if (owner)
          throw new KitError(
            ErrorKind.PermissionDenied,
            `conversation ${input.conversationId} belongs to thread ${owner.threadId}: resolve its interactions at that thread (resolveNotification with a capability)`,
          );
      }),
    },
  );

  registerSettlements({ journal, generation: input.generation, owner: () => owner, checkSender });

  const paging = new ConversationPaging(journal);

  // While it waits out its minimal lifetime, the run keeps serving, cutting and requesting pages.
  const timeToContinue = () => lifetime.due && !lifetime.ageingToContinue;
  const pageWork = () => journal.backlog.hasPageToCut() || paging.pageToRequest() !== undefined;
  // Patch `pageTrafficBeforeContinuing`, asked once, when it first matters: a run due (not pressed) whose
  // spill is cut asks for no more pages and continues once its page traffic has landed.
  let quieting: boolean | undefined;
  const mayQuiet = () => timeToContinue() && !lifetime.pressing && !journal.backlog.hasPageToCut();
  const holding = () => quieting === true && mayQuiet() && paging.inFlight();
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
    const wake = () =>
      retired() || ownerEndedAtMs !== endedWhenArmed || (!holding() && (timeToContinue() || pageWork()));
    if (Number.isFinite(retentionLeftMs())) await condition(wake, Math.max(1, retentionLeftMs()));
    else await condition(wake);
    if (retired()) {
      handingOver = true;
      await condition(allHandlersFinished);
      await paging.discard();
      return;
    }
    const continuing = timeToContinue() && lifetime.mayContinue();
    if (continuing && mayQuiet() && paging.traffic()) {
      quieting ??= patched(patches.pageTrafficBeforeContinuing);
      if (quieting && paging.inFlight()) continue;
      if (quieting) break;
    }
    // Pages before continuing (patch `pagesBeforeContinuing`): one page cut per loop, beside the due
    // page's request, and the run continues once the spill is cut, unless it may not wait.
    const pagesFirst = pageWork() && !lifetime.pressing && patched(patches.pagesBeforeContinuing);
    if (continuing && !pagesFirst) break;
    if (pagesFirst) {
      await Promise.all([paging.requestPage(), paging.cutPages(1)]);
    } else {
      await paging.cutPages();
      await paging.requestPage();
    }
  }
  // Waiting receives answer `idle` at once, so their clients re-poll the next run.
  handingOver = true;
  await condition(allHandlersFinished);
  // Items published by the last handlers leave in pages, not in the snapshot (SPEC S3.10: a spill past
  // a page is admitted only while its pages have room, to be cut here), unless a page cannot be started.
  while (journal.backlog.hasPageToCut() && (await paging.cutPages())) await condition(allHandlersFinished);
  continuingAsNew();
  return await continueAsNew<typeof conversationWorkflow>(
    continuationOf(input, { owner, ownerEndedAtMs, snapshot: journal.snapshot(), live: live.snapshot() }),
  );
}
