import { condition, getExternalWorkflowHandle, log, setHandler, workflowInfo } from '@temporalio/workflow';
import { ConversationPageInput, PageRequest } from '../domain/conversation-pages';
import { pageDeliveredSignal, pageRequestSignal } from '../domain/conversation-messages';
import { startFailure, workflowInput } from './workflow-input';
import { signalDropped } from './workflow-metrics';

/**
 * Holds one page of a conversation's backlog outside the conversation's own state, so the
 * conversation's continue-as-new input stays small however far its receiver falls behind (S7.3).
 * Started by the conversation as an abandoned child; when asked, it signals its entries to the
 * conversation's workflow id (reaching whichever run is current), then completes.
 */
export async function conversationPageWorkflow(rawInput: ConversationPageInput): Promise<void> {
  let input: ConversationPageInput;
  try {
    input = workflowInput(ConversationPageInput, rawInput, 'conversation page input');
  } catch (error) {
    throw startFailure(error);
  }
  let requested = false;
  // SPEC S3.9: asked with the page's token (a page of before `pageTokens` has none, and is asked without).
  setHandler(pageRequestSignal, (raw) => {
    const request = PageRequest.safeParse(raw);
    if (!input.token || (request.success && request.data.token === input.token)) requested = true;
    else
      signalDropped(
        pageRequestSignal.name,
        request.success ? 'unproven' : 'malformed',
        'dropped a page request without the page token',
        { pageId: workflowInfo().workflowId },
      );
  });
  await condition(() => requested);
  try {
    await getExternalWorkflowHandle(input.conversationId).signal(pageDeliveredSignal, {
      pageId: workflowInfo().workflowId,
      entries: input.entries,
      ...(input.token ? { token: input.token } : {}),
    });
  } catch (error) {
    // Only a conversation that no longer exists cannot be signalled: nobody is left to read this page.
    log.warn('page not delivered', { conversationId: input.conversationId, error: String(error) });
  }
}
