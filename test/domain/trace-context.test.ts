// SPEC S11.2: span identities that replay reproduces, and the W3C context they travel in.
import fc from 'fast-check';
import { formatTraceparent, parseTraceparent, spanIdOf, traceIdOf } from '../../domain/trace-context';
import { activitySpanOf, controlSendOf, modelResultOf, runSpanOf } from '../../domain/trace-attributes';

test('a span id is 16 hex digits, the same for the same key and different for different keys', () => {
  fc.assert(
    fc.property(fc.string(), fc.string(), (first, second) => {
      expect(spanIdOf(first)).toMatch(/^[0-9a-f]{16}$/);
      expect(spanIdOf(first)).not.toBe('0000000000000000');
      expect(spanIdOf(first)).toBe(spanIdOf(first));
      if (first !== second) expect(spanIdOf(first)).not.toBe(spanIdOf(second));
    }),
  );
  // Keys that differ in one sequence number (the usual case) are far apart.
  const ids = new Set(Array.from({ length: 10_000 }, (_, seq) => spanIdOf(`run-1/activity:${seq}`)));
  expect(ids.size).toBe(10_000);
});

test('a root run nobody traced has its root id as trace id; other keys hash to 32 hex digits', () => {
  expect(traceIdOf('thread_0123456789abcdef0123456789abcdef')).toBe('0123456789abcdef0123456789abcdef');
  expect(traceIdOf('root')).toMatch(/^[0-9a-f]{32}$/);
  expect(traceIdOf('root')).toBe(traceIdOf('root'));
  expect(traceIdOf('thread_00000000000000000000000000000000')).not.toBe('00000000000000000000000000000000');
});

test('traceparent: formatted as sampled version 00, parsed back; malformed or all-zero values are refused', () => {
  const context = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  expect(formatTraceparent(context)).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  expect(parseTraceparent(formatTraceparent(context))).toEqual(context);
  expect(parseTraceparent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00')).toEqual(context);
  for (const bad of [
    undefined,
    42,
    '',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
  ])
    expect(parseTraceparent(bad)).toBeUndefined();
});

test('spans are named and described after the GenAI conventions, from raw inputs and results', () => {
  expect(runSpanOf('conversationWorkflow', [{}])).toBeUndefined();
  expect(
    runSpanOf('agentWorkflow', [
      { thread: { id: 'thread_1', rootId: 'thread_0', path: '/root/a', name: 'a', depth: 1 }, spec: {} },
    ]),
  ).toMatchObject({
    name: 'agent /root/a',
    traceKey: 'thread_0',
    attributes: { 'agents_kit.span': 'thread', 'gen_ai.agent.id': 'thread_1', 'agents_kit.thread.depth': 1 },
  });
  expect(activitySpanOf('callModel', [{ threadId: 't', model: 'gpt-x', maxOutputTokens: 64 }])).toMatchObject(
    {
      name: 'chat gpt-x',
      kind: 'client',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-x',
        'gen_ai.request.max_tokens': 64,
      },
    },
  );
  expect(activitySpanOf('runTool', [{ name: 'publish' }])).toMatchObject({
    name: 'execute_tool publish',
    attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'publish' },
  });
  expect(activitySpanOf('somethingElse', [{}])).toBeUndefined();
  expect(
    modelResultOf({
      model: 'openai:gpt-x',
      toolCalls: [{}],
      tokens: 9,
      usage: { inputTokens: 7, outputTokens: 2, costUsd: 0.001 },
    }),
  ).toEqual({
    name: 'chat gpt-x',
    attributes: {
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.response.model': 'gpt-x',
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 2,
      'agents_kit.usage.cost_usd': 0.001,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'agents_kit.tool_calls': 1,
    },
  });
  // Anything else: fewer attributes, never an error.
  expect(modelResultOf(null).attributes).toMatchObject({ 'gen_ai.response.finish_reasons': ['stop'] });
  expect(controlSendOf([null])).toEqual({ operation: 'unknown' });
  expect(
    controlSendOf([
      {
        from: { threadId: 'thread_a' },
        operationId: 'thread_a/3',
        operation: { type: 'send-message', request: { recipient: 'thread_b', triggerTurn: true } },
      },
    ]),
  ).toEqual({
    operation: 'send-message',
    from: 'thread_a',
    operationId: 'thread_a/3',
    recipient: 'thread_b',
    triggerTurn: true,
  });
});
