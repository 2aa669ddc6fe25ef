// Helpers of the approval policy tests (SPEC S11.4): a tool that needs approval and counts its runs, and
// a reader of the root's conversation, where every interaction of the tree and its settlement show up.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import type { ThreadService } from '../../client/thread-service';
import { defineTool } from '../../activities';
import type { ConversationNotification, KernelSpec, ScriptStepShape } from '../../domain/schemas';

/** Policy pushes the workflow of `threadId` received from its root (SPEC S11.4), in all its runs. */
export async function policyPushes(client: Client, threadId: string): Promise<number> {
  let pushes = 0;
  for (let runId: string | undefined = undefined; ;) {
    const { events } = await client.workflow.getHandle(threadId, runId).fetchHistory();
    pushes += (events ?? []).filter(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'approval-policy-changed',
    ).length;
    runId = events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!runId) return pushes;
  }
}

/** Waits until the workflow of `threadId` has received `count` policy pushes, in all its runs. */
export async function untilPolicyPushes(client: Client, threadId: string, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const pushes = await policyPushes(client, threadId);
    if (pushes >= count) return;
    if (Date.now() > deadline) throw new Error(`${threadId} received ${pushes} of ${count} policy pushes`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** A tool that needs approval; `runs` lists the targets it shipped, in order. */
export function shipTool() {
  const runs: string[] = [];
  const tool = defineTool({
    name: 'ship',
    description: 'Ships a build to a target. Needs a person to approve.',
    input: z.object({ target: z.string() }).strict(),
    needsApproval: true,
    run: async ({ target }) => {
      runs.push(target);
      return `shipped ${target}`;
    },
  });
  return { tool, runs };
}

/** A scripted kernel: each turn plays its steps, then replies with the last step's result. */
export const scripted = (...turns: ScriptStepShape[][]): KernelSpec => ({
  type: 'scripted',
  turns: turns.map((steps) => [...steps, { type: 'reply', text: '{{last}}' }]),
});

export const shipStep = (target: string): ScriptStepShape => ({
  type: 'tool',
  tool: 'ship',
  input: { target },
});

type InteractionItem = ConversationNotification & {
  body: Extract<ConversationNotification['body'], { type: 'interaction' }>;
};

/**
 * The root's conversation as one person watching the tree sees it (SPEC S5.9): every interaction of the
 * tree, and each one's settlement (an `interaction-resolved` status), received once and kept.
 */
export class RootInbox {
  readonly items: ConversationNotification[] = [];

  private constructor(private readonly receiver: ConversationNotificationReceiver) {}

  static async open(client: Client, service: ThreadService, taskQueue: string): Promise<RootInbox> {
    const root = await service.refreshRoot();
    return new RootInbox(
      await ConversationNotificationReceiver.open(client, root.conversationId, {
        taskQueue,
        capability: service.rootCapability,
      }),
    );
  }

  /** The first item (seen or still to come) that `accept` takes. */
  async find(accept: (item: ConversationNotification) => boolean): Promise<ConversationNotification> {
    const seen = this.items.find(accept);
    if (seen) return seen;
    for (;;) {
      const item = await this.receiver.recv();
      if (!item) throw new Error('the root conversation ended');
      this.items.push(item);
      if (accept(item)) return item;
    }
  }

  /** The `n`th interaction (1 first) raised by `threadId`. */
  async interaction(threadId: string, n = 1): Promise<InteractionItem> {
    let count = 0;
    return (await this.find(
      (item) => item.body.type === 'interaction' && item.body.threadId === threadId && ++count === n,
    )) as InteractionItem;
  }

  /** The settlement of `requestId` as the root's conversation records it (SPEC S5.10's audit trail). */
  settlement(requestId: string): Promise<ConversationNotification> {
    return this.find(
      (item) =>
        item.body.type === 'status' &&
        item.body.event === 'interaction-resolved' &&
        (item.body.detail ?? '').startsWith(requestId),
    );
  }

  /** The interactions received so far. */
  get interactions(): InteractionItem[] {
    return this.items.filter((item): item is InteractionItem => item.body.type === 'interaction');
  }

  async close(): Promise<void> {
    await this.receiver.dispose();
  }
}
