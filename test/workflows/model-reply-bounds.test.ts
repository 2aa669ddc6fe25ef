// SPEC S3.10, S7.5: a model that answers with a tool call of 1 MiB (outside, a spawn_agent whose task
// was 1 MiB) put 1.4 MB into the agent's history per call, and the transcript trimming then dropped
// everything but the task: the model never learned the call had failed and looped until maxSteps. The
// reply is bounded in the activity (the call refused, with a reason the model reads), and an entry too
// large for the transcript is cut to fit instead of taking the rest with it. Real server, real
// OpenAI-protocol HTTP model.
import { createActivities } from '../../activities';
import { maxToolCallInputBytes } from '../../domain/model-reply';
import { attachRun, untilTurns } from '../helpers/runs';
import { providerFor, startOpenAIServer, systemOf, toolResultsOf } from '../helpers/openai-server';
import { maxCallTokens } from '../../domain/usage';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
const taskQueue = uniqueTaskQueue('reply-bounds');

beforeAll(async () => {
  server = await startOpenAIServer((request) => {
    if (systemOf(request).includes('/root/pricey')) return { text: 'pricey', tokens: 1e13 };
    const done = toolResultsOf(request).length;
    if (done === 0) return { toolCalls: [{ name: 'list_agents', input: {} }] };
    if (done === 1) return { toolCalls: [{ name: 'spawn_agent', input: { task: 'x'.repeat(1 << 20) } }] };
    return { text: `done after ${done} tool results` };
  });
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ model: providerFor(server.url) }) });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});

test('a tool call too large is refused with a reason, and the model keeps its context', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task: 'spawn a huge task', name: 'root', kernel: { type: 'model', maxSteps: 6 } },
  });
  const root = await untilTurns(service, service.rootThreadId, 1);
  expect(root.latestTurn?.result).toBe('done after 2 tool results');
  // The third request still has everything: system, task, both calls and both results.
  expect(server.requests.map((request) => request.body.messages.length)).toEqual([2, 4, 6]);
  const [listed, spawned] = toolResultsOf(server.requests[2]!);
  expect(listed?.name).toBe('list_agents');
  expect(spawned?.name).toBe('spawn_agent');
  expect(JSON.parse(spawned!.content)).toEqual({
    error: {
      kind: 'QuotaExceeded',
      message: expect.stringContaining(
        `more than the ${maxToolCallInputBytes} a tool call may take: not run`,
      ),
    },
  });
  expect(await service.rootControls().listThreads()).toHaveLength(1);
  // No model call's result in the root's history is large.
  const { events } = await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory();
  const results = (events ?? []).flatMap((event) => {
    const payload = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
    return payload ? [payload.data?.length ?? 0] : [];
  });
  expect(results.length).toBeGreaterThanOrEqual(3);
  expect(Math.max(...results)).toBeLessThan(16 * 1024);
  await service.shutdown();
});

test('a provider reporting absurd usage counts at most a billion tokens a kind, and the budget holds', async () => {
  // Outside, a sub-agent's model reported 10^12 tokens: its settlement was refused by the operation's
  // bound, the tree's budget kept 43k of 50k tokens "left", and its next turn failed as Protocol.
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', budgetTokens: 50_000 },
  });
  const pricey = await service
    .rootControls()
    .spawn({ name: 'pricey', task: 'cost a lot', kernel: { type: 'model' } });
  const first = await untilTurns(service, pricey.id, 1);
  expect(first.latestTurn).toMatchObject({ status: 'completed', result: 'pricey' });
  const usage = await service.usage();
  expect(usage.tree.total.inputTokens).toBe(maxCallTokens);
  expect(usage.budget.tokens.used).toBeGreaterThanOrEqual(50_000);
  await service.rootControls().sendMessage({ recipient: pricey.id, content: 'again', triggerTurn: true });
  const second = await untilTurns(service, pricey.id, 2);
  expect(second.latestTurn?.error?.kind).toBe('QuotaExceeded');
  await service.shutdown();
});
