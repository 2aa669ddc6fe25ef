// The budget scenario of scripts/record-histories.ts (`--budgets`, SPEC S11.3): a tree attached with a
// budget in US dollars, whose model-kernel threads (the scripted model, at the recorder's prices) hold
// each call in tokens and micro-dollars, continue as new carrying both allowances, and are refused once
// the budget has no room: the dollar-budget thread gives back what it holds, and one under a narrower
// token budget takes the `refusedCallGivesBack` patch. Added beside the v1 ones: the dollar budget is
// turned on by the grant in the input, the token give-back by its patch (workflows/patches.ts).
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import type { ModelPrices } from '../activities';
import type { ModelProvider } from '../activities/providers';
import { untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

/** The recorder's prices: the scripted model at $2 in and $8 out per million tokens. */
export const budgetPrices = (model: ModelProvider): ModelPrices => ({
  [`${model.name}:${model.defaultModel}`]: { input: 2, output: 8 },
});

export async function recordBudgets(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'spend within the budget',
      name: 'root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'root ready' }]] },
    },
    grant: { idleTimeoutMs: 600_000, maxTotal: 4, budgetUsd: 0.03 },
    continueAsNewAfterEvents: 100,
  });
  const root = service.rootControls();
  const kernel = { type: 'model' as const, maxOutputTokens: 200 };
  const spenders = [
    await root.spawn({ name: 'dollars', task: 'count words', kernel, tools: ['word_count'] }),
    await root.spawn({
      name: 'tokens',
      task: 'count words',
      kernel,
      tools: ['word_count'],
      limits: { budgetTokens: 6_000 },
    }),
  ];
  // Turns until each one's budget refuses a call (each turn is two calls: word_count, then the answer).
  for (const thread of spenders) {
    for (let turn = 1; ; turn++) {
      const done = await untilTurns(service, thread.id, turn);
      if (done.latestTurn?.error?.kind === 'QuotaExceeded') {
        log(`${thread.path}: refused in turn ${turn}: ${done.latestTurn.error.message}`);
        break;
      }
      if (turn > 40) throw new Error(`${thread.path} was never refused`);
      await root.sendMessage({ recipient: thread.id, content: `count again ${turn}`, triggerTurn: true });
    }
  }
  const counters = await service.counters();
  log(`tree: $${counters.costUsd} of $${counters.budgetUsd}, ${counters.tokens} tokens`);
  await service.shutdown();
}
