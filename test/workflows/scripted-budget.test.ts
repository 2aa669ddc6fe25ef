// SPEC S6.4: a scripted reply's `tokens` are charged against the root's budget when the reply is
// reached (patch scriptedTokensCharged): the reply that goes past the budget counts and fails its turn
// with QuotaExceeded, later replies fail counting nothing, so a tree passes its budget by less than one
// reply — in sequence, in a burst of sub-agents, and in the root's own turns.
import type { ThreadService } from '../../client/thread-service';
import type { AgentThread, TurnOutcome } from '../../domain/schemas';
import { scriptedKernelModel } from '../../domain/usage';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('scripted-budget');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const budgetTokens = 1000;
const replyTokens = 300;
/** What the rule allows: the budget, passed by less than one reply. */
const mostUsed = budgetTokens + replyTokens - 1;

/** Counters, the usage report's budget and the tree's ledger of scripted tokens, which all agree. */
async function usedTokens(service: ThreadService): Promise<number> {
  const counters = await service.counters();
  const usage = await service.usage();
  expect(usage.budget.tokens).toEqual({ limit: budgetTokens, used: counters.tokens });
  expect(usage.tree.byModel[scriptedKernelModel]?.outputTokens ?? 0).toBe(counters.tokens);
  return counters.tokens;
}

const summary = (turn: TurnOutcome | undefined) =>
  turn?.status === 'failed' ? `failed ${turn.error?.kind}` : turn?.status;

test('sequential replies of 300 tokens under 1000: three complete, the one that goes past and later ones fail QuotaExceeded', async () => {
  const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', budgetTokens } });
  const root = service.rootControls();
  const spender = await root.spawn({
    name: 'spender',
    task: 'spend',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'k', tokens: replyTokens }]] },
  });
  // Each completed turn counts its reply; the fourth goes past the budget and counts too; the rest nothing.
  const expectedUsed = [300, 600, 900, 1200, 1200, 1200];
  const outcomes: (string | undefined)[] = [];
  const used: number[] = [];
  const turnTokens: (number | undefined)[] = [];
  for (let turn = 1; turn <= 6; turn++) {
    if (turn > 1) await root.sendMessage({ recipient: spender.id, content: `go ${turn}`, triggerTurn: true });
    const thread = await untilTurns(service, spender.id, turn);
    outcomes.push(summary(thread.latestTurn));
    turnTokens.push(thread.latestTurn?.tokens);
    const expected = expectedUsed[turn - 1];
    used.push(
      await eventually(
        () => usedTokens(service),
        (tokens) => tokens === expected,
        `${expected} used`,
      ),
    );
  }
  expect(outcomes).toEqual([
    'completed',
    'completed',
    'completed',
    'failed QuotaExceeded',
    'failed QuotaExceeded',
    'failed QuotaExceeded',
  ]);
  expect(Math.max(...used)).toBeLessThanOrEqual(mostUsed);
  // Each turn's outcome says what it used (the turnTokens feature): the reply that went past counted.
  expect(turnTokens).toEqual([300, 300, 300, 300, 0, 0]);
  await service.shutdown();
}, 120_000);

test('a burst of ten sub-agents replying 300 tokens at once under 1000 stays within the rule', async () => {
  const service = await attachRun(temporal.client, taskQueue, { grant: { owner: 'tests', budgetTokens } });
  const root = service.rootControls();
  const kernel = {
    type: 'scripted' as const,
    turns: [
      [{ type: 'reply' as const, text: 'ready' }],
      [{ type: 'reply' as const, text: 'k', tokens: replyTokens }],
    ],
  };
  const agents: AgentThread[] = [];
  for (let n = 0; n < 10; n++) agents.push(await root.spawn({ name: `burst-${n}`, task: 'spend', kernel }));
  for (const agent of agents) await untilTurns(service, agent.id, 1);
  // All at once: every second turn is asked for before any of them runs.
  await Promise.all(
    agents.map((agent) => root.sendMessage({ recipient: agent.id, content: 'go', triggerTurn: true })),
  );
  const ended = await Promise.all(agents.map((agent) => untilTurns(service, agent.id, 2, 60_000)));
  const outcomes = ended.map((thread) => summary(thread.latestTurn));
  const completed = outcomes.filter((outcome) => outcome === 'completed').length;
  expect(outcomes.filter((outcome) => outcome !== 'completed')).toEqual(
    Array(10 - completed).fill('failed QuotaExceeded'),
  );
  // Each reply admitted while room was left counts: those that completed, and at most one that went past.
  const used = await eventually(
    () => usedTokens(service),
    (tokens) => tokens % replyTokens === 0,
    'every turn end to be counted',
  );
  expect(used).toBeLessThanOrEqual(mostUsed);
  expect(used / replyTokens - completed).toBeGreaterThanOrEqual(0);
  expect(used / replyTokens - completed).toBeLessThanOrEqual(1);
  // Two fit whatever the order (each grant held meanwhile is a quarter of what is left at most).
  expect(completed).toBeGreaterThanOrEqual(2);
  await service.shutdown();
}, 180_000);

test("the root's own scripted turns obey the same rule", async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', budgetTokens },
    root: {
      name: 'root',
      task: 'spend at the root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'r', tokens: 600 }]] },
    },
  });
  const root = service.rootControls();
  const rootTurns = async (turns: number) =>
    eventually(
      async () => (await root.loadThread(service.rootThreadId))!,
      (thread) => thread.turnsCompleted >= turns && thread.status !== 'running',
      `the root to complete ${turns} turn(s)`,
    );
  const first = (await rootTurns(1)).latestTurn;
  const outcomes = [summary(first)];
  expect(first?.tokens).toBe(600);
  const used = [await usedTokens(service)];
  // A sub-agent asks the root for a turn each time it is asked for one.
  const poker = await root.spawn({
    name: 'poker',
    task: 'wake the root',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'send', to: 'root', content: 'wake', triggerTurn: true },
          { type: 'reply', text: 'woke' },
        ],
      ],
    },
  });
  for (let turn = 2; turn <= 3; turn++) {
    if (turn > 2) await root.sendMessage({ recipient: poker.id, content: 'again', triggerTurn: true });
    outcomes.push(summary((await rootTurns(turn)).latestTurn));
    used.push(await usedTokens(service));
  }
  expect(outcomes).toEqual(['completed', 'failed QuotaExceeded', 'failed QuotaExceeded']);
  expect(used).toEqual([600, 1200, 1200]);
  await service.shutdown();
}, 120_000);
