// The CLI's `usage` command (SPEC S11.3): a run's ledger per model and per thread, as lines and as JSON.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cli-usage');
let env: Record<string, string>;

beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: (await import('../../activities')).createActivities(),
  });
  env = { TEMPORAL_ADDRESS: temporal.address, AGENTS_KIT_TASK_QUEUE: taskQueue };
});
afterAll(async () => temporal?.close());

interface Usage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  calls: number;
}

test('usage prints the tree ledger and each thread line; --json is the report; without the capability it is refused', async () => {
  const helper = { type: 'scripted', turns: [[{ type: 'reply', text: 'helped', tokens: 30 }]] };
  const script = join(process.env.AGENTS_KIT_TEST_DIR!, `cli-usage-${randomUUID().slice(0, 8)}.json`);
  writeFileSync(
    script,
    JSON.stringify({
      type: 'scripted',
      turns: [
        [
          { type: 'spawn', as: 'helper', request: { name: 'helper', task: 'help', kernel: helper } },
          { type: 'wait', on: ['helper'], timeoutMs: 60_000 },
          { type: 'reply', text: 'done', tokens: 120 },
        ],
      ],
    }),
  );
  const run = await runCli(
    [
      'run',
      'count my tokens',
      '--script',
      script,
      '--keep',
      '--json',
      '--budget',
      '5000',
      '--budget-usd',
      '2.5',
    ],
    env,
  );
  expect(run.code).toBe(0);
  const { rootThreadId, capability } = JSON.parse(run.stdout) as { rootThreadId: string; capability: string };
  const withKey = { ...env, AGENTS_KIT_CAPABILITY: capability };

  const refused = await runCli(['usage', rootThreadId], env);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^agents-kit: PermissionDenied: /);

  const asJson = await runCli(['usage', rootThreadId, '--json'], withKey);
  expect(asJson.code).toBe(0);
  const report = JSON.parse(asJson.stdout) as {
    rootId: string;
    tree: { total: Usage; byModel: Record<string, Usage> };
    threads: { path: string; total: Usage }[];
    budget: { tokens: { limit: number; used: number }; usd?: { limit: number; used: number } };
  };
  expect(report.rootId).toBe(rootThreadId);
  expect(report.tree.total).toEqual({ inputTokens: 0, outputTokens: 150, costUsd: 0, calls: 2 });
  expect(Object.keys(report.tree.byModel)).toEqual(['agents-kit:scripted-kernel']);
  const byPath = Object.fromEntries(report.threads.map((thread) => [thread.path, thread.total.outputTokens]));
  expect(Object.values(byPath).sort((a, b) => a - b)).toEqual([30, 120]);
  // The grant's budgets and what the tree used of them (a scripted kernel costs nothing).
  expect(report.budget).toEqual({ tokens: { limit: 5000, used: 150 }, usd: { limit: 2.5, used: 0 } });

  const lines = await runCli(['usage', rootThreadId], withKey);
  expect(lines.code).toBe(0);
  expect(lines.stdout.split('\n')[0]).toBe(`tree ${rootThreadId}: 0 in  150 out  $0.000000  2 calls`);
  expect(lines.stdout.split('\n')[1]).toBe('  budget: 150 of 5000 tokens  $0.000000 of $2.5');
  expect(lines.stdout).toMatch(/helper \(\w+\): 0 in {2}30 out/);
  const badBudget = await runCli(['run', 'x', '--budget-usd', '-1'], env);
  expect(badBudget.code).toBe(1);
  expect(badBudget.stderr).toMatch(/--budget-usd/);

  const bad = await runCli(['usage', 'not-a-thread'], withKey);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/^agents-kit: Protocol: /);
  expect((await runCli(['shutdown', rootThreadId], withKey)).code).toBe(0);
});
