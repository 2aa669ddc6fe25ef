import type { SpanAttributes, SpanKind } from './trace-span';

/**
 * SPEC S11.2: what agents-kit's spans are called and what they say, from the workflow inputs, activity
 * inputs and results that the workflow interceptors see. Names and attributes follow OpenTelemetry's
 * GenAI semantic conventions where they define one (`gen_ai.*`: agent, chat, tool execution, usage);
 * what they do not define is under `agents_kit.*`. Pure readers of raw values: a shape they do not know
 * gives fewer attributes, never an error. No span carries a task, prompt, message, tool input or answer
 * (the GenAI conventions make content opt-in, and a trace backend sits outside the payload codec): ids,
 * names, paths, tool names, models, token counts and outcomes only.
 */

/** The kinds of agents-kit span (`agents_kit.span`), what a query for the tree's shape filters on. */
export const TraceSpanType = {
  rootRun: 'root-run',
  thread: 'thread',
  createAgent: 'create-agent',
  turn: 'turn',
  modelCall: 'model-call',
  toolCall: 'tool-call',
  messageSend: 'message-send',
  messageReceive: 'message-receive',
  control: 'control',
  /** A request from outside the tree's trace (a client's), linked to the caller. */
  request: 'request',
} as const;
export type TraceSpanType = (typeof TraceSpanType)[keyof typeof TraceSpanType];

type Fields = Record<string, unknown>;
const fields = (value: unknown): Fields =>
  typeof value === 'object' && value !== null ? (value as Fields) : {};
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** `attributes` without the keys whose value is unknown. */
function defined(
  attributes: Record<string, string | number | boolean | string[] | undefined>,
): SpanAttributes {
  const kept: SpanAttributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) kept[key] = value;
  return kept;
}

/** What a traced workflow run is: its span's name, the key its trace id falls back on, and attributes. */
export interface RunSpan {
  name: string;
  /** The root thread id: a run nobody traced before gets the trace of its tree (domain/trace-context). */
  traceKey: string;
  attributes: SpanAttributes;
}

/** The span of one run of a root run or agent workflow; undefined for the other workflow types. */
export function runSpanOf(workflowType: string, args: readonly unknown[]): RunSpan | undefined {
  const input = fields(args[0]);
  const spec = fields(input.spec);
  const continued = input.resume !== undefined;
  if (workflowType === 'rootRunWorkflow') {
    const rootId = text(input.rootThreadId) ?? 'root';
    return {
      name: `root run ${text(spec.name) ?? 'root'}`,
      traceKey: rootId,
      attributes: defined({
        'agents_kit.span': TraceSpanType.rootRun,
        'gen_ai.agent.id': rootId,
        'gen_ai.agent.name': text(spec.name) ?? 'root',
        'agents_kit.thread.path': '/root',
        'agents_kit.root_id': rootId,
        'gen_ai.request.model': text(spec.model),
        'agents_kit.run.continued': continued,
      }),
    };
  }
  if (workflowType === 'agentWorkflow') {
    const thread = fields(input.thread);
    const path = text(thread.path) ?? '?';
    return {
      name: `agent ${path}`,
      traceKey: text(thread.rootId) ?? text(thread.id) ?? path,
      attributes: defined({
        'agents_kit.span': TraceSpanType.thread,
        'gen_ai.agent.id': text(thread.id),
        'gen_ai.agent.name': text(thread.name) ?? path,
        'agents_kit.thread.path': path,
        'agents_kit.root_id': text(thread.rootId),
        'agents_kit.parent_id': text(thread.parentId),
        'agents_kit.thread.depth': count(thread.depth),
        'gen_ai.request.model': text(spec.model),
        'agents_kit.run.continued': continued,
      }),
    };
  }
  return undefined;
}

/** What the span of an activity is called and says before it runs; undefined: not traced. */
export interface ActivitySpan {
  name: string;
  kind: SpanKind;
  attributes: SpanAttributes;
}

/** The span of a model call (`callModel`) or tool call (`runTool`); other activities are not traced. */
export function activitySpanOf(activityType: string, args: readonly unknown[]): ActivitySpan | undefined {
  const input = fields(args[0]);
  if (activityType === 'callModel') {
    const call = fields(input.call);
    return {
      name: `chat ${text(input.model) ?? 'default'}`,
      kind: 'client',
      attributes: defined({
        'agents_kit.span': TraceSpanType.modelCall,
        'gen_ai.operation.name': 'chat',
        'gen_ai.agent.id': text(input.threadId),
        'gen_ai.request.model': text(input.model),
        'gen_ai.request.max_tokens': count(input.maxOutputTokens),
        'agents_kit.turn': count(call.turn),
        'agents_kit.step': count(call.step),
      }),
    };
  }
  if (activityType === 'runTool') {
    const name = text(input.name) ?? '?';
    return {
      name: `execute_tool ${name}`,
      kind: 'internal',
      attributes: defined({
        'agents_kit.span': TraceSpanType.toolCall,
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.type': 'function',
        'gen_ai.agent.id': text(input.threadId),
      }),
    };
  }
  return undefined;
}

/** What a model call's result adds to its span (the provider's usage, the model that answered). */
export function modelResultOf(result: unknown): { name?: string; attributes: SpanAttributes } {
  const output = fields(result);
  const usage = fields(output.usage);
  const qualified = text(output.model);
  const split = qualified?.indexOf(':') ?? -1;
  const provider = qualified && split > 0 ? qualified.slice(0, split) : undefined;
  const model = qualified && split > 0 ? qualified.slice(split + 1) : qualified;
  const toolCalls = Array.isArray(output.toolCalls) ? output.toolCalls.length : 0;
  return {
    ...(model ? { name: `chat ${model}` } : {}),
    attributes: defined({
      'gen_ai.provider.name': provider,
      // The attribute's name before the GenAI conventions renamed it, which many backends still read.
      'gen_ai.system': provider,
      'gen_ai.response.model': model,
      'gen_ai.usage.input_tokens': count(usage.inputTokens),
      'gen_ai.usage.output_tokens': count(usage.outputTokens) ?? count(output.tokens),
      'agents_kit.usage.cost_usd': count(usage.costUsd),
      'gen_ai.response.finish_reasons': [toolCalls > 0 ? 'tool_calls' : 'stop'],
      'agents_kit.tool_calls': toolCalls,
      'agents_kit.model.scripted': output.scripted === true ? true : undefined,
    }),
  };
}

/** A `control-request` signal's operation: who sends what to whom. */
export interface ControlSend {
  operation: string;
  from?: string;
  operationId?: string;
  recipient?: string;
  triggerTurn?: boolean;
}

/** The operation a `control-request` signal carries, read from its raw argument. */
export function controlSendOf(args: readonly unknown[]): ControlSend {
  const request = fields(args[0]);
  const operation = fields(request.operation);
  const body = fields(operation.request);
  return {
    operation: text(operation.type) ?? 'unknown',
    ...(text(fields(request.from).threadId) ? { from: text(fields(request.from).threadId)! } : {}),
    ...(text(request.operationId) ? { operationId: text(request.operationId)! } : {}),
    ...(text(body.recipient) ? { recipient: text(body.recipient)! } : {}),
    ...(typeof body.triggerTurn === 'boolean' ? { triggerTurn: body.triggerTurn } : {}),
  };
}

/** The attributes of a message's send or receive span. */
export const messageAttributes = (send: ControlSend, type: TraceSpanType): SpanAttributes =>
  defined({
    'agents_kit.span': type,
    'agents_kit.message.sender': send.from,
    'agents_kit.message.recipient': send.recipient,
    'agents_kit.message.trigger_turn': send.triggerTurn,
    'agents_kit.operation.id': send.operationId,
  });

/** The span of a child workflow start: a sub-agent's (`create_agent`), none for a conversation. */
export function childSpanOf(workflowType: string, args: readonly unknown[]): ActivitySpan | undefined {
  if (workflowType !== 'agentWorkflow') return undefined;
  const thread = fields(fields(args[0]).thread);
  const path = text(thread.path) ?? '?';
  return {
    name: `create_agent ${path}`,
    kind: 'internal',
    attributes: defined({
      'agents_kit.span': TraceSpanType.createAgent,
      'gen_ai.operation.name': 'create_agent',
      'gen_ai.agent.id': text(thread.id),
      'gen_ai.agent.name': text(thread.name) ?? path,
      'agents_kit.thread.path': path,
    }),
  };
}
