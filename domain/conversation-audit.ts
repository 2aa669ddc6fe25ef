import type { InteractionResolution } from './conversation-schemas';
import type { NotificationBody } from './schemas';

/** The passive notification that records an answered interaction (SPEC S5.10's audit trail). */
export function auditOf(resolution: InteractionResolution): NotificationBody {
  const { answer, resolvedBy } = resolution;
  const what =
    answer.type === 'approval'
      ? `${answer.approved ? 'approved' : 'denied'}${answer.reason ? `: ${answer.reason.slice(0, 500)}` : ''}`
      : answer.text === ''
        ? 'unanswered'
        : `answered: ${answer.text.slice(0, 500)}`;
  const who = resolution.byPolicy
    ? ` by the approval policy (${resolution.byPolicy})`
    : resolvedBy
      ? ` by ${resolvedBy.threadId}${resolvedBy.name ? ` (${resolvedBy.name})` : ''}${answer.type === 'approval' && answer.remember ? ', remembered for the run' : ''}`
      : ' (nobody answered in time)';
  return {
    type: 'status',
    event: 'interaction-resolved',
    threadId: resolution.threadId,
    detail: `${resolution.requestId} ${what}${who} at ${resolution.resolvedAt}`,
  };
}
