import { log, patched, setHandler, uuid4 } from '@temporalio/workflow';
import { auditOf } from '../domain/conversation-audit';
import type { ConversationJournal } from '../domain/conversation-journal';
import { interactionSettledSignal } from '../domain/conversation-messages';
import {
  isUnansweredQuestion,
  SettleInteraction,
  type SettledResolution,
  type ConversationOwner,
} from '../domain/conversation-schemas';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { newId } from '../domain/ids';
import { patches } from './patches';
import { signalQuietly } from './signal-quietly';
import { dropReasonOf, signalDropped } from './workflow-metrics';

/** What a conversation's settlements need of it. */
export interface SettlementHost {
  journal: ConversationJournal;
  generation: number;
  owner(): ConversationOwner | undefined;
  /** Throws PermissionDenied unless `from` may publish here (SPEC S3.9); `workflowOnly`: not delegated. */
  checkSender(from: unknown, what: string, workflowOnly?: boolean): void;
}

/**
 * Registers the `interaction-settled` signal (SPEC S5.4, S5.9, S5.10): a proven sender's answer to an
 * interaction settles it here, records who answered when (an audit entry later receivers see) and, for
 * its owner's interaction mirrored into the root's conversation, settles the mirror too. Anything else is
 * dropped and counted.
 */
export function registerSettlements(host: SettlementHost): void {
  const { journal, generation } = host;
  setHandler(interactionSettledSignal, async (raw: SettleInteraction) => {
    try {
      const settle = parseInput(SettleInteraction.partial({ from: true }), raw, 'interaction-settled');
      // Only the workflow of the thread that asked settles its interaction (SPEC S3.9, S5.10): not another
      // thread of the tree, nor a service holding its delegated capability.
      host.checkSender(settle.from, 'interaction-settled', true);
      if (settle.from && settle.from.threadId !== settle.resolution.threadId)
        throw new KitError(
          ErrorKind.PermissionDenied,
          `interaction-settled: ${settle.from.threadId} cannot settle an interaction of ${settle.resolution.threadId}`,
        );
      if (isUnansweredQuestion(settle.resolution.answer) && !patched(patches.unansweredQuestionsSettle))
        throw KitError.protocol('interaction-settled: a question’s answer has text', {
          fields: ['resolution.answer.text'],
        });
      const before = journal.summary(generation).resolvedInteractions;
      // SPEC S5.9: the mirror this conversation made of its thread's interaction, when the thread leaves it
      // to this conversation (decided by the signal, in history: the same on replay).
      const { settleMirror, ...forward } = settle;
      const owner = host.owner();
      const fromOwner = owner !== undefined && settle.from?.threadId === owner.threadId;
      const mirror = settleMirror && fromOwner ? journal.mirrorOf(settle.resolution.requestId) : undefined;
      journal.settle(settle.resolution);
      // SPEC S5.10: the answer stays in the record, for later receivers too. Not when its thread's end has
      // closed the conversation (a settle may arrive after it): the mirror is settled all the same.
      if (journal.summary(generation).resolvedInteractions > before) recordAudit(journal, settle.resolution);
      if (mirror) await signalQuietly(mirror, interactionSettledSignal, forward as SettleInteraction);
    } catch (error) {
      signalDropped(interactionSettledSignal.name, dropReasonOf(error), 'interaction-settled dropped', {
        error: String(error),
      });
    }
  });
}

/**
 * SPEC S5.10: publishes the audit entry of a settled interaction, so later receivers see who answered
 * when. A conversation closed before it (by a reader, or its thread's end) keeps the settlement all the
 * same.
 */
export function recordAudit(journal: ConversationJournal, resolution: SettledResolution): void {
  try {
    journal.publish([
      { id: newId('notification', uuid4), createdAt: new Date().toISOString(), body: auditOf(resolution) },
    ]);
  } catch (error) {
    log.warn('interaction record not published', { error: String(error) });
  }
}
