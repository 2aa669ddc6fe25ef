import type { Client } from '@temporalio/client';
import { createInterface } from 'node:readline/promises';
import type { InteractionAnswer } from '../../domain/conversation-schemas';
import type { ConversationNotification } from '../../domain/schemas';
import { formatNotification } from './format';

/** How interactions are answered: asked at the terminal, approved automatically, or left for `resolve`. */
export type ApprovalMode = 'ask' | 'approve' | 'leave';

/** The approval mode for this process: `--yes` approves; a terminal asks; otherwise interactions wait. */
export function approvalMode(yes: boolean): ApprovalMode {
  if (yes) return 'approve';
  return process.stdin.isTTY ? 'ask' : 'leave';
}

async function askAtTerminal(
  item: ConversationNotification,
  say: (line: string) => void,
): Promise<InteractionAnswer> {
  const body = item.body;
  if (body.type !== 'interaction') throw new Error('not an interaction');
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    if (body.kind === 'question')
      return { type: 'question', text: await terminal.question(`${body.prompt}\n> `) };
    const what = body.tool
      ? `${body.prompt} (${body.tool.name} ${JSON.stringify(body.tool.input)})`
      : body.prompt;
    const reply = await terminal.question(`approval requested: ${what}\napprove? [y/N] `);
    const approved = /^y(es)?$/i.test(reply.trim());
    say(approved ? 'approved' : 'denied');
    return approved
      ? { type: 'approval', approved }
      : { type: 'approval', approved, reason: 'declined at the prompt' };
  } finally {
    terminal.close();
  }
}

/**
 * Streams a conversation (SPEC S8.2) until `signal` aborts: each notification is printed with `say`;
 * interactions are answered as `mode` says. The receiver's lease is released when it stops.
 */
export async function streamConversation(options: {
  client: Client;
  conversationId: string;
  taskQueue: string;
  mode: ApprovalMode;
  say: (line: string) => void;
  signal: AbortSignal;
}): Promise<void> {
  const { client, say, signal } = options;
  const { ConversationNotificationReceiver } = await import('../../client/conversation-receiver');
  const { resolveNotification } = await import('../../client/conversations');
  await using receiver = await ConversationNotificationReceiver.open(client, options.conversationId, {
    taskQueue: options.taskQueue,
  });
  while (!signal.aborted) {
    const item = await receiver.recv({ signal }).catch((error: unknown) => {
      if (signal.aborted) return null;
      throw error;
    });
    if (!item) return;
    say(formatNotification(item));
    if (item.body.type !== 'interaction') continue;
    if (options.mode === 'leave') {
      say(
        `waiting for an answer: agents-kit resolve ${item.body.threadId} ${item.body.requestId} --approve|--deny`,
      );
      continue;
    }
    const answer: InteractionAnswer =
      options.mode === 'approve'
        ? item.body.kind === 'approval'
          ? { type: 'approval', approved: true }
          : { type: 'question', text: 'yes' }
        : await askAtTerminal(item, say);
    if (options.mode === 'approve') say('approved automatically (--yes, or no terminal)');
    await resolveNotification(client, item, answer);
  }
}
