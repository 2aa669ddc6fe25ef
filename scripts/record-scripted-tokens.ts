// The scenario of scripts/record-histories.ts `--scripted-tokens` (patch `scriptedTokensCharged`): under
// a budget of 1000 tokens, a sub-agent's scripted replies of 300 tokens are charged as they are reached —
// three turns complete, the fourth goes past the budget and fails, the fifth is refused — and the root's
// own scripted reply is charged the same way.
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import { untilTurns } from '../test/helpers/runs';

export async function recordScriptedTokensCharged(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'coordinate',
      name: 'root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'root spent', tokens: 100 }]] },
    },
    grant: { budgetTokens: 1000 },
  });
  const root = service.rootControls();
  await untilTurns(service, service.rootThreadId, 1);
  const spender = await root.spawn({
    name: 'spender',
    task: 'spend',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'k', tokens: 300 }]] },
  });
  for (let turn = 1; turn <= 5; turn++) {
    if (turn > 1) await root.sendMessage({ recipient: spender.id, content: `go ${turn}`, triggerTurn: true });
    await untilTurns(service, spender.id, turn);
  }
  await service.shutdown();
}
