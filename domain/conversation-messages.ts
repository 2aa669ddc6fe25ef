import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  CloseConversationRequest,
  CloseResult,
  ConversationSummary,
  InteractionResolution,
  OpenReceiverRequest,
  PublishReceipt,
  PublishRequest,
  ReceiveRequest,
  ReceiveResult,
  ReceiverLease,
  ReleaseReceiverRequest,
  ResolveNotificationRequest,
  SettleInteraction,
  AdoptConversation,
} from './conversation-schemas';
import type { PageDelivery, PageRequest } from './conversation-pages';
import type { LiveChunk, LiveOutputView, WatchOutputRequest } from './live-output';

// Wire names are stable: renaming one breaks running conversations and recorded histories.

/** Fire-and-forget publish of a batch (S5.2); bad input is logged and dropped, after close refused. */
export const publishSignal = defineSignal<[PublishRequest]>('publish');
/** Publish with a receipt: the seqs assigned, or a Closed / Protocol error the caller sees. */
export const publishUpdate = defineUpdate<PublishReceipt, [PublishRequest]>('publish-with-receipt');
/** Take or renew the exclusive receiver lease (S5.3). */
export const openReceiverUpdate = defineUpdate<ReceiverLease, [OpenReceiverRequest]>('open-receiver');
/** Long-poll for the next item; answers `idle` when nothing arrives within the wait (S5.4). */
export const receiveUpdate = defineUpdate<ReceiveResult, [ReceiveRequest]>('receive');
/** Release the lease without acknowledging the last item received (S5.5). */
export const releaseReceiverUpdate = defineUpdate<{ released: boolean }, [ReleaseReceiverRequest]>(
  'release-receiver',
);
/** Close the conversation: drain-only for receivers, publishing refused (S5.6). */
export const closeConversationUpdate = defineUpdate<CloseResult, [CloseConversationRequest?]>(
  'close-conversation',
);
/** Answer an interaction of a standalone conversation (S5.4); a thread's is answered at its thread. */
export const resolveNotificationUpdate = defineUpdate<InteractionResolution, [ResolveNotificationRequest]>(
  'resolve-notification',
);
/** Thread → its conversation and the root's mirror: the interaction is settled (answered or timed out). */
export const interactionSettledSignal = defineSignal<[SettleInteraction]>('interaction-settled');
/** Thread → its conversation, started first by a receiver: the thread claims it (SPEC S3.9, S5.10). */
export const adoptConversationSignal = defineSignal<[AdoptConversation]>('adopt-conversation');
/** Counts, lease holder and closed flag of a conversation. */
export const conversationSummaryQuery = defineQuery<ConversationSummary, []>('conversation-summary');
/** Sent by a conversation to one of its page workflows: send me your entries (S7.3). */
export const pageRequestSignal = defineSignal<[PageRequest?]>('conversation-page-request');
/** Sent by a page workflow to its conversation (by workflow id, so to the latest run) with its entries. */
export const pageDeliveredSignal = defineSignal<[PageDelivery]>('conversation-page-delivered');
/** Model activity → its thread's conversation: the text a model call is generating (SPEC S10.1). */
export const liveOutputSignal = defineSignal<[LiveChunk]>('live-output');
/** Long-poll for a thread's live output after a cursor (SPEC S10.1); not a notification, not acknowledged. */
export const watchOutputUpdate = defineUpdate<LiveOutputView, [WatchOutputRequest]>('watch-output');
