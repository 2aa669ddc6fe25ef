import { z } from 'zod';
import { createActivities, defineTool } from '../../activities';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import {
  providerFor,
  startOpenAIServer,
  systemOf,
  toolResultsOf,
  type ReceivedRequest,
  type Reply,
} from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
let policy: (request: ReceivedRequest, index: number) => Reply = () => ({ text: 'unset' });
const taskQueue = uniqueTaskQueue('model');

const bigTool = defineTool({
  name: 'fetch_report',
  description: 'Returns a very large report.',
  input: z.object({ part: z.number().int() }).strict(),
  run: async ({ part }) => `report ${part}: ${'x'.repeat(300 * 1024)}`,
});

let tallies = 0;
const tallyTool = defineTool({
  name: 'tally',
  description: 'Counts one more.',
  input: z.object({}).strict(),
  local: true,
  run: async () => ++tallies,
});

beforeAll(async () => {
  server = await startOpenAIServer((request, index) => policy(request, index));
  temporal = await connectTestTemporal();
  const model = providerFor(server.url);
  await temporal.startWorker({
    taskQueue,
    activities: createActivities({ model, tools: [bigTool, tallyTool] }),
  });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});
beforeEach(() => server.requests.splice(0));

const modelRoot = (task: string) => ({ task, name: 'root', kernel: { type: 'model' as const } });
const lastUserText = (request: ReceivedRequest) =>
  String(request.body.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');

test('a model-driven root spawns two sub-agents, waits for them, and answers from their results', async () => {
  policy = (request) => {
    const system = systemOf(request);
    const results = toolResultsOf(request);
    if (system.includes('sub-agent')) {
      const name = /agent \/root\/(\w+)/.exec(system)![1]!;
      if (lastUserText(request).includes('agent_message')) return { text: 'ack' };
      if (results.length === 0)
        return {
          toolCalls: [
            {
              name: 'send_agent_message',
              input: {
                recipient: /parent is (thread_\w+)/.exec(system)![1],
                content: `${name} checking in`,
                trigger_turn: true,
              },
            },
          ],
          tokens: 7,
        };
      return { text: `result-${name}`, tokens: 5 };
    }
    if (lastUserText(request).includes('agent_message')) return { text: 'root noted the message' };
    const spawned = results
      .filter((result) => result.name === 'spawn_agent')
      .map((result) => JSON.parse(result.content) as { id: string });
    if (spawned.length === 0) {
      return {
        toolCalls: [
          { name: 'spawn_agent', input: { name: 'alpha', task: 'find alpha' } },
          { name: 'spawn_agent', input: { name: 'beta', task: 'find beta' } },
        ],
        tokens: 20,
      };
    }
    const waits = results
      .filter((result) => result.name === 'wait_agents')
      .map((result) => JSON.parse(result.content) as { outcomes: { status: string; result?: string }[] });
    const done = waits
      .flatMap((wait) => wait.outcomes)
      .filter((outcome) => outcome.result?.startsWith('result-'));
    const answers = [...new Set(done.map((outcome) => outcome.result))].sort();
    if (answers.length < 2)
      return {
        toolCalls: [
          { name: 'wait_agents', input: { ids: spawned.map((thread) => thread.id), timeout_ms: 20_000 } },
        ],
        tokens: 3,
      };
    return { text: `combined: ${answers.join(' + ')}`, tokens: 4 };
  };
  const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('research alpha and beta') });
  const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  expect(first.result).toBe('combined: result-alpha + result-beta');
  const threads = await service.rootControls().listThreads();
  expect(threads.map((thread) => thread.path).sort()).toEqual(['/root', '/root/alpha', '/root/beta']);

  // What the provider saw: the agent-control tools with JSON Schema parameters…
  const rootFirst = server.requests.find((request) => systemOf(request).includes('root agent'))!;
  const tools = Object.fromEntries(rootFirst.body.tools!.map((tool) => [tool.function.name, tool.function]));
  expect(Object.keys(tools)).toEqual(
    expect.arrayContaining([
      'spawn_agent',
      'send_agent_message',
      'wait_agents',
      'list_agents',
      'interrupt_agent',
      'close_agent',
      'fetch_report',
    ]),
  );
  expect(tools.spawn_agent!.parameters).toMatchObject({
    type: 'object',
    properties: { task: { type: 'string' } },
    required: ['task'],
  });
  // …and messages from sub-agents as structured envelopes in a later root turn.
  await untilTurns(service, service.rootThreadId, 2);
  const envelopes = server.requests
    .filter((request) => systemOf(request).includes('root agent'))
    .flatMap((request) =>
      request.body.messages.filter(
        (message) => message.role === 'user' && String(message.content).startsWith('{'),
      ),
    )
    .map((message) => JSON.parse(String(message.content)) as Record<string, unknown>);
  expect(envelopes).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        type: 'agent_message',
        content: 'alpha checking in',
        seq: expect.any(Number),
      }),
    ]),
  );
  const alpha = threads.find((thread) => thread.name === 'alpha')!;
  expect(envelopes.find((envelope) => envelope.content === 'alpha checking in')!.from).toBe(alpha.id);
  // Every token the provider reported is charged to the run's budget.
  const used = server.requests.reduce((total, request) => total + request.tokens, 0);
  expect((await service.counters()).tokens).toBe(used);
});

describe('provider failures (S6.5) and budgets (S6.4)', () => {
  test('429 and 500 are retried with backoff and the turn succeeds', async () => {
    let calls = 0;
    policy = () =>
      calls++ === 0
        ? { status: 429, error: 'slow down' }
        : calls === 2
          ? { status: 500, error: 'oops' }
          : { text: 'made it' };
    const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('be patient') });
    expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe('made it');
    expect(server.requests).toHaveLength(3);
  });

  test('401 fails the turn at once with a clear error', async () => {
    policy = () => ({ status: 401, error: 'invalid api key' });
    const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('no key') });
    const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
    expect(first.status).toBe('failed');
    expect(first.error?.kind).toBe('PermissionDenied');
    expect(first.error?.message).toMatch(/refused the credentials \(HTTP 401\)/);
    expect(server.requests).toHaveLength(1);
  });

  test('400 fails the turn at once as Protocol', async () => {
    policy = () => ({ status: 400, error: 'bad tool schema' });
    const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('bad request') });
    const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
    expect(first.error).toMatchObject({ kind: 'Protocol' });
    expect(server.requests).toHaveLength(1);
  });

  test('a model call is refused before it starts when its reservation would pass the budget (S11.3)', async () => {
    policy = () => ({ toolCalls: [{ name: 'list_agents', input: {} }], tokens: 400 });
    const service = await attachRun(temporal.client, taskQueue, {
      root: { ...modelRoot('spend it all'), kernel: { type: 'model', maxOutputTokens: 100 } },
      grant: { owner: 'tests', budgetTokens: 8000 },
    });
    const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
    expect(first.status).toBe('failed');
    expect(first.error?.kind).toBe('QuotaExceeded');
    expect(first.error?.message).toMatch(/no room for another model call/);
    const calls = server.requests.length; // each call that started fit: the budget is never passed
    expect(calls).toBeGreaterThanOrEqual(5);
    const counters = await service.counters();
    expect(counters.tokens).toBe(calls * 400);
    expect(counters.tokens).toBeLessThanOrEqual(8000);
  });

  test('a sub-agent reserves each model call from its allowance, with no round trip to the root per call, and never passes the budget', async () => {
    policy = () => ({ toolCalls: [{ name: 'list_agents', input: {} }], tokens: 400 });
    const service = await attachRun(temporal.client, taskQueue, {
      grant: { owner: 'tests', budgetTokens: 20_000 },
    });
    const before = server.requests.length;
    const spender = await service
      .rootControls()
      .spawn({ task: 'spend it all', kernel: { type: 'model', maxSteps: 100, maxOutputTokens: 100 } });
    const first = await service.rootControls().subscribeFirstTurn(spender.id);
    expect(first.status).toBe('failed');
    expect(first.error?.kind).toBe('QuotaExceeded');
    const calls = server.requests.length - before;
    // Each call charged exactly what it reported, and no call started that could pass the budget.
    const charged = (count: number) =>
      eventually(
        () => service.counters(),
        (now) => now.tokens === count * 400,
        'every token charged',
      );
    expect((await charged(calls)).tokens).toBeLessThanOrEqual(20_000);
    // Refused only once the reservation (input estimate and 100 out) passed what was left.
    expect(calls).toBeGreaterThanOrEqual(10);
    expect(first.error?.message).toMatch(/no room for another model call/);
    // The allowance is asked for a few times, not per model call (list_agents is the other request).
    const history = await temporal.client.workflow.getHandle(spender.id).fetchHistory();
    const requests = (history.events ?? []).filter(
      (event) =>
        event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'control-request',
    ).length;
    expect(requests - calls).toBeLessThan(calls / 2);
    // What the refused thread still held went back to the root (patch refusedCallGivesBack): another
    // model agent may spend it, and is refused in turn, the budget never passed.
    const late = await service
      .rootControls()
      .spawn({ task: 'no budget left', kernel: { type: 'model', maxOutputTokens: 100 } })
      .then(
        async (thread) => (await service.rootControls().subscribeFirstTurn(thread.id)).error?.kind,
        async (error: unknown) => (await kitErrorOf(Promise.reject(error))).kind,
      );
    expect(late).toBe('QuotaExceeded');
    expect((await charged(server.requests.length - before)).tokens).toBeLessThanOrEqual(20_000);
  });
});

test("a model sub-agent's one-step first turn asks its root nothing: it starts with an allowance, `running`, its turn counted", async () => {
  policy = () => ({ text: 'done at once', tokens: 50 });
  const service = await attachRun(temporal.client, taskQueue);
  const quick = await service.rootControls().spawn({ task: 'answer', kernel: { type: 'model' } });
  // Counted as started with its workflow (SPEC S6.4 and S8.1 without a round trip or an upsert).
  expect(quick).toMatchObject({ status: 'running', turnsStarted: 1 });
  expect((await service.rootControls().subscribeFirstTurn(quick.id)).result).toBe('done at once');
  await untilTurns(service, quick.id, 1);
  const events = (await temporal.client.workflow.getHandle(quick.id).fetchHistory()).events ?? [];
  const started = events[0]!.workflowExecutionStartedEventAttributes!;
  const input = JSON.parse(Buffer.from(started.input!.payloads![0]!.data!).toString()) as {
    allowance?: number;
  };
  expect(input.allowance).toBeGreaterThan(0);
  const signals = events.flatMap((event) => {
    const name = event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName;
    return name ? [name] : [];
  });
  // The turn's end is reported; no reservation is asked and the first turn's start is not reported.
  expect(signals.filter((name) => name === 'control-request')).toEqual([]);
  expect(signals.filter((name) => name === 'thread-event')).toHaveLength(1);
  // The turn's start went to its conversation with the conversation's start; its end in one signal.
  expect(signals.filter((name) => name === 'publish')).toHaveLength(1);
  const conversationStart = events.find(
    (event) => event.startChildWorkflowExecutionInitiatedEventAttributes,
  )!.startChildWorkflowExecutionInitiatedEventAttributes!;
  const first = (
    JSON.parse(Buffer.from(conversationStart.input!.payloads![0]!.data!).toString()) as {
      first?: { notifications: { body: { type: string; event?: string } }[] };
    }
  ).first;
  expect(first?.notifications.map(({ body }) => body.event)).toEqual(['turn-start']);
  // Only `idle` is upserted: `running` was given at the start.
  expect(events.filter((event) => event.upsertWorkflowSearchAttributesEventAttributes)).toHaveLength(1);
  const counters = await eventually(
    () => service.counters(),
    (now) => now.tokens === 50,
    'the turn’s tokens charged',
  );
  expect(counters.tokens).toBe(50);
});

test('an interrupt during a slow model response aborts the provider request and leaves the thread idle', async () => {
  policy = () => ({ text: 'too late', delayMs: 60_000 });
  const service = await attachRun(temporal.client, taskQueue);
  const thinker = await service.rootControls().spawn({ task: 'think slowly', kernel: { type: 'model' } });
  await eventually(
    async () => server.requests.length,
    (count) => count === 1,
    'the model request',
  );
  const receipt = await service.rootControls().interrupt(thinker.id);
  expect(receipt).toMatchObject({ cancellationRequested: true, interruptedTurn: 1 });
  await eventually(async () => server.requests[0]!.aborted, Boolean, 'the provider request to be aborted');
  const idle = await untilTurns(service, thinker.id, 1);
  expect(idle).toMatchObject({ status: 'idle', latestTurn: { status: 'interrupted' } });
});

test('tool errors come back to the model as results it can act on', async () => {
  policy = (request) =>
    toolResultsOf(request).length === 0
      ? {
          toolCalls: [
            {
              name: 'send_agent_message',
              input: { recipient: 'thread_00000000000000000000000000000000', content: 'hello?' },
            },
            { name: 'no_such_tool', input: {} },
          ],
        }
      : {
          text: `recovered after: ${toolResultsOf(request)
            .map((result) => JSON.parse(result.content).error.kind)
            .join(', ')}`,
        };
  const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('make mistakes') });
  expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe(
    'recovered after: PermissionDenied, NotFound',
  );
});

test('a transcript that would pass 256 KiB never travels in one payload, and the agent still works', async () => {
  policy = (request) => {
    const reports = toolResultsOf(request).filter((result) => result.name === 'fetch_report').length;
    return reports < 3
      ? { toolCalls: [{ name: 'fetch_report', input: { part: reports } }] }
      : { text: `read ${reports} reports` };
  };
  const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('read three huge reports') });
  expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe(
    'read 3 reports',
  );
  expect(Math.max(...server.requests.map((request) => request.bytes))).toBeLessThan(256 * 1024);
  const history = await service.handle.fetchHistory();
  const largest = Math.max(...history.events!.map((event) => JSON.stringify(event).length));
  expect(largest).toBeLessThan(256 * 1024);
});

test('a fast tool (defineTool local: true) runs as a local activity: its result reaches the model, no activity task is scheduled for it', async () => {
  policy = (request) => {
    const done = toolResultsOf(request).filter((result) => result.name === 'tally');
    return done.length < 2
      ? { toolCalls: [{ name: 'tally', input: {} }] }
      : { text: `tallied ${done.at(-1)!.content}` };
  };
  const before = tallies;
  const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('tally twice') });
  expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe(
    `tallied ${before + 2}`,
  );
  expect(tallies).toBe(before + 2);
  const events = (await service.handle.fetchHistory()).events!;
  const scheduled = events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name);
  expect(scheduled.filter((name) => name === 'runTool')).toHaveLength(0);
  expect(scheduled.filter((name) => name === 'callModel')).toHaveLength(3);
  expect(
    events.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity'),
  ).toHaveLength(2);
});

test("a forked child starts with its parent's conversation text, never its tool traffic or system prompt (S4.1)", async () => {
  policy = (request) => {
    const system = systemOf(request);
    if (system.includes('sub-agent')) return { text: 'child done' };
    const results = toolResultsOf(request);
    if (results.length === 0)
      return { text: 'I will delegate this', toolCalls: [{ name: 'list_agents', input: {} }] };
    if (results.length === 1)
      return {
        toolCalls: [{ name: 'spawn_agent', input: { name: 'forked', task: 'carry on', fork: 'full' } }],
      };
    return { text: 'root done' };
  };
  const service = await attachRun(temporal.client, taskQueue, { root: modelRoot('the parent task') });
  await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  const forked = (await service.rootControls().listThreads()).find((thread) => thread.name === 'forked')!;
  await untilTurns(service, forked.id, 1);
  const childRequest = server.requests.find((request) => systemOf(request).includes('/root/forked'))!;
  const messages = childRequest.body.messages.map((message) => [
    message.role,
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
  ]);
  expect(messages.filter(([role]) => role !== 'system')).toEqual([
    ['user', 'the parent task'],
    ['assistant', 'I will delegate this'],
    ['user', 'carry on'],
  ]);
  expect(messages.filter(([role]) => role === 'system')).toHaveLength(1);
  expect(messages[0]![1]).not.toContain('root agent');
});
