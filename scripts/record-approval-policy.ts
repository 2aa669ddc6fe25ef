// The approval-policy scenario of scripts/record-histories.ts (`--approval`, SPEC S11.4): a tree attached
// with an approval policy, so the golden histories hold the gate's paths — a never-ask call, the root's
// own "always allow" (remembered at the root) and a thread's (a `remember-approval` request), an
// always-ask call and its worker probe, a scripted step the tool's own needsApproval decides, a policy
// change releasing a waiting call, pushes to live threads and the root's continue-as-new carrying it.
// Added beside the v1 ones: the feature is turned on by the policy in the input (workflows/patches.ts).
import type { Client } from '@temporalio/client';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import { resolveNotification } from '../client/conversations';
import { attachRecorder } from './record-attach';
import type { ConversationNotification, ScriptStepShape } from '../domain/schemas';
import { untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

const tool = (name: string, input: unknown): ScriptStepShape => ({ type: 'tool', tool: name, input });
const script = (...steps: ScriptStepShape[]) => ({
  type: 'scripted' as const,
  turns: [[...steps, { type: 'reply' as const, text: '{{last}}' }]],
});

export async function recordApprovalPolicy(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'publish, then coordinate',
      name: 'root',
      kernel: script(tool('publish', { title: 'from the root' })),
    },
    grant: { idleTimeoutMs: 600_000, maxTotal: 6 },
    continueAsNewAfterEvents: 100,
    approvalPolicy: { neverAsk: ['word_count'], alwaysAsk: ['echo'] },
  });
  const rootConversation = (await service.refreshRoot()).conversationId;
  const receiver = await ConversationNotificationReceiver.open(client, rootConversation, {
    taskQueue,
    capability: service.rootCapability,
  });
  const seen: ConversationNotification[] = [];
  const interaction = async (threadId: string) => {
    for (;;) {
      const item = seen.find(
        (candidate) => candidate.body.type === 'interaction' && candidate.body.threadId === threadId,
      );
      if (item) {
        seen.splice(seen.indexOf(item), 1);
        return item;
      }
      const next = await receiver.recv();
      if (!next) throw new Error('the root conversation ended');
      seen.push(next);
    }
  };
  const answer = (item: ConversationNotification, remember = false) =>
    resolveNotification(
      client,
      item,
      { type: 'approval', approved: true, ...(remember ? { remember: true as const } : {}) },
      { capability: service.rootCapability, name: 'recorder' },
    );
  // The root's own call, remembered at the root.
  await answer(await interaction(service.rootThreadId), true);
  log('the root remembered publish');
  const root = service.rootControls();
  const first = await root.spawn({
    name: 'first',
    task: 'count, publish, echo',
    kernel: script(
      tool('word_count', { text: 'a b c' }),
      tool('publish', { title: 'first' }),
      tool('echo', 'first'),
    ),
  });
  await answer(await interaction(first.id));
  await untilTurns(service, first.id, 1);
  const second = await root.spawn({
    name: 'second',
    task: 'sleep, then echo',
    kernel: script(tool('sleep', { ms: 1 }), tool('echo', 'second')),
  });
  await interaction(second.id);
  // A change releases the waiting echo; another forgets what was remembered.
  await service.setApprovalPolicy({ neverAsk: ['word_count', 'echo'], alwaysAsk: [] });
  await untilTurns(service, second.id, 1);
  await service.setApprovalPolicy({ remembered: [] });
  const third = await root.spawn({
    name: 'third',
    task: 'publish',
    kernel: script(tool('publish', { title: 'third' })),
  });
  // A thread's "always allow": the root remembers it for the tree and pushes it to every live thread.
  await answer(await interaction(third.id), true);
  await untilTurns(service, third.id, 1);
  const firstRun = (await service.handle.describe()).runId;
  for (let change = 0; (await service.handle.describe()).runId === firstRun; change++) {
    if (change > 100) throw new Error('the root did not continue as new');
    await service.setApprovalPolicy({ alwaysAsk: change % 2 ? ['sleep'] : [] });
  }
  log(`the root continued as new with policy version ${(await service.approvalPolicy()).version}`);
  const late = await root.spawn({
    name: 'late',
    task: 'publish',
    kernel: script(tool('publish', { title: 'late' })),
  });
  await untilTurns(service, late.id, 1);
  await receiver.dispose();
  await service.shutdown();
}
