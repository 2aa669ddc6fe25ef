import type { Capability } from '../../domain/capability';
import type { Client } from '@temporalio/client';
import { createInterface } from 'node:readline/promises';
import type { InteractionAnswer } from '../../domain/conversation-schemas';
import type { ConversationNotification, NotificationBody } from '../../domain/schemas';
import { formatNotification } from './format';

/**
 * How interactions are answered: asked at the terminal, approved automatically (`because` says why:
 * `--yes`, or the demo having no terminal), or left waiting for `agents-kit resolve`.
 */
export type ApprovalPolicy = { mode: 'ask' } | { mode: 'approve'; because: string } | { mode: 'leave' };

/**
 * The approval policy of this process: `--yes` approves; a terminal asks; without one, interactions wait
 * for `agents-kit resolve` (`run`) or are approved (`withoutTerminal: 'approve'`, the demo).
 */
export function approvalPolicy(yes: boolean, withoutTerminal: 'leave' | 'approve' = 'leave'): ApprovalPolicy {
  if (yes) return { mode: 'approve', because: '--yes' };
  if (process.stdin.isTTY) return { mode: 'ask' };
  return withoutTerminal === 'approve' ? { mode: 'approve', because: 'no terminal' } : { mode: 'leave' };
}

/** The one line said at the start, so the user knows what will happen to the approvals of the run. */
export function describeApprovals(policy: ApprovalPolicy): string {
  switch (policy.mode) {
    case 'ask':
      return 'approvals: asked here';
    case 'approve':
      return `approvals: approved automatically (${policy.because})`;
    case 'leave':
      return 'approvals: no terminal — each will wait for `agents-kit resolve <threadId> <requestId> --approve|--deny` (or pass --yes to approve automatically)';
  }
}

async function askAtTerminal(
  item: { body: NotificationBody },
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
    // `a`: always allow this tool for the rest of the run (SPEC S11.4), offered for tool calls only.
    const always = body.tool ? ` (a: always allow ${body.tool.name} for this run)` : '';
    const reply = (await terminal.question(`approval requested: ${what}\napprove? [y/N]${always} `)).trim();
    const remember = body.tool !== undefined && /^a(lways)?$/i.test(reply);
    const approved = remember || /^y(es)?$/i.test(reply);
    say(
      remember
        ? `approved: ${body.tool!.name} is allowed for the rest of the run`
        : approved
          ? 'approved'
          : 'denied',
    );
    if (remember) return { type: 'approval', approved, remember };
    return approved
      ? { type: 'approval', approved }
      : { type: 'approval', approved, reason: 'declined at the prompt' };
  } finally {
    terminal.close();
  }
}

/**
 * Streams a conversation (SPEC S8.2) until `signal` aborts: each notification is printed with `say`;
 * interactions are answered as `policy` says; `onHandled` hears each item once it is printed (and
 * answered). The receiver's lease is released when it stops, acknowledging nothing more (S5.5).
 */
export async function streamConversation(options: {
  client: Client;
  conversationId: string;
  taskQueue: string;
  policy: ApprovalPolicy;
  say: (line: string) => void;
  signal: AbortSignal;
  /** Whose authority answers the interactions (SPEC S3.9): the root's, usually. */
  capability: Capability;
  /** The root capability to show where an answer is left to `agents-kit resolve`. */
  runKey?: string;
  onHandled?: (item: ConversationNotification) => void;
}): Promise<void> {
  const { client, policy, say, signal } = options;
  const { ConversationNotificationReceiver } = await import('../../client/conversation-receiver');
  await using receiver = await ConversationNotificationReceiver.open(client, options.conversationId, {
    taskQueue: options.taskQueue,
    capability: options.capability,
  });
  while (!signal.aborted) {
    const item = await receiver.recv({ signal }).catch((error: unknown) => {
      if (signal.aborted) return null;
      throw error;
    });
    if (!item) return;
    say(formatNotification(item));
    if (item.body.type === 'interaction')
      await answerInteraction({
        client,
        item,
        policy,
        say,
        capability: options.capability,
        runKey: options.runKey,
      });
    options.onHandled?.(item);
  }
}

/**
 * Answers an interaction as `policy` says (asked at the terminal, approved automatically, or left for
 * `agents-kit resolve`, whose command is printed), with `capability`'s authority (SPEC S3.9).
 */
export async function answerInteraction(options: {
  client: Client;
  item: { body: NotificationBody };
  policy: ApprovalPolicy;
  say: (line: string) => void;
  capability: Capability;
  runKey?: string | undefined;
}): Promise<void> {
  const { client, item, policy, say } = options;
  const { resolveNotification } = await import('../../client/conversations');
  if (item.body.type !== 'interaction') return;
  const { threadId, requestId, kind } = item.body;
  if (policy.mode === 'leave') {
    const answer = kind === 'approval' ? '--approve|--deny' : '--answer <text>';
    // Whoever answers from another terminal acts with the root's authority (SPEC S3.9).
    const withKey = options.runKey ? ` (with AGENTS_KIT_CAPABILITY=${options.runKey})` : '';
    say(`waiting for an answer: agents-kit resolve ${threadId} ${requestId} ${answer}${withKey}`);
  } else if (policy.mode === 'approve') {
    const answer: InteractionAnswer =
      kind === 'approval' ? { type: 'approval', approved: true } : { type: 'question', text: 'yes' };
    await resolveNotification(client, item, answer, {
      capability: options.capability,
      name: 'agents-kit CLI',
    });
    say(
      kind === 'approval'
        ? `approved automatically (${policy.because})`
        : `answered "yes" automatically (${policy.because})`,
    );
  } else {
    await resolveNotification(client, item, await askAtTerminal(item, say), {
      capability: options.capability,
      name: 'agents-kit CLI',
    });
  }
}
