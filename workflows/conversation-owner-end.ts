import { patched } from '@temporalio/workflow';
import type { ConversationJournal } from '../domain/conversation-journal';
import { interactionSettledSignal } from '../domain/conversation-messages';
import {
  unansweredAnswer,
  type InteractionResolution,
  type PublishRequest,
} from '../domain/conversation-schemas';
import type { Capability } from '../domain/capability';
import { recordAudit } from './conversation-settlements';
import { patches } from './patches';
import { signalQuietly } from './signal-quietly';

/** Whether `request` reports the end of thread `threadId` (its conversation's last item, S5.10). */
export const endsThread = (request: Pick<PublishRequest, 'notifications'>, threadId: string): boolean =>
  request.notifications.some(
    ({ body }) => body.type === 'status' && body.event === 'thread-end' && body.threadId === threadId,
  );

/**
 * SPEC S5.9, S5.10: the interactions of thread `threadId` still pending in its conversation when its end
 * arrives, settled as unanswered (an approval denied, a question with no answer), each recorded by an
 * audit entry before the end: a thread that ends by itself has settled them already; one terminated from
 * outside, whose end its root reports, never will, and receivers were offered them for good (the root's
 * conversation too, kept running by them). Patch `ownerEndSettlesInteractions`, asked only when there
 * are such interactions. Returns the settles of the mirrors they made in the root's conversation, to
 * send with `from` (the proof of the thread's workflow that reported the end).
 */
export function settleLeftInteractions(
  journal: ConversationJournal,
  threadId: string,
): Array<(from: Capability) => Promise<boolean>> {
  const left = journal
    .backlogItems()
    .flatMap(({ seq, body }) =>
      body.type === 'interaction' && body.threadId === threadId ? [{ seq, body }] : [],
    );
  if (left.length === 0 || !patched(patches.ownerEndSettlesInteractions)) return [];
  const resolvedAt = new Date().toISOString();
  const mirrors: Array<(from: Capability) => Promise<boolean>> = [];
  for (const { seq, body } of left) {
    const resolution: InteractionResolution = {
      requestId: body.requestId,
      threadId: body.threadId,
      conversationId: journal.conversationId,
      seq,
      answer: unansweredAnswer(body.kind, 'the thread ended before an answer'),
      resolvedAt,
    };
    const mirror = journal.mirrorOf(body.requestId);
    if (!journal.settle(resolution)) continue;
    recordAudit(journal, resolution);
    if (mirror) mirrors.push((from) => signalQuietly(mirror, interactionSettledSignal, { from, resolution }));
  }
  return mirrors;
}
