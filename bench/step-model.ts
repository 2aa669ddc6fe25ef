import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { defineTool, type ModelProvider, type ToolDefinition } from '../activities';
import { createLiveModel, liveModelId } from './live-output';

// The fakes of the agent-step bench: a model that answers at once and a tool that does nothing, so a
// step's time is what agents-kit and Temporal add, not what a provider takes.

/** Tokens every model call reports (input + output), on both sides of the comparison. */
export const stepTokens = 20;

/** The no-op tool every step of the agent-step bench calls. */
export const noopTool: ToolDefinition = defineTool({
  name: 'bench_noop',
  description: 'Does nothing and answers "ok" (benchmark only).',
  input: z.object({}).strict(),
  run: async () => 'ok',
});

/** The same no-op as a fast tool: run as a local activity (ToolDefinition.local). */
export const localNoopTool: ToolDefinition = { ...noopTool, name: 'bench_noop_local', local: true };

/** Tool results since the prompt's last user message: the steps this turn has taken. */
function stepsTaken(prompt: LanguageModelV3CallOptions['prompt']): number {
  const lastUser = prompt.map((message) => message.role).lastIndexOf('user');
  return prompt.slice(lastUser + 1).filter((message) => message.role === 'tool').length;
}

/** The bench no-op the thread may use (the local one when it is offered). */
const offeredNoop = (options: LanguageModelV3CallOptions): string =>
  options.tools?.some((offered) => offered.name === localNoopTool.name) ? localNoopTool.name : noopTool.name;

/** One call's answer, whether generated or streamed: the bench no-op or "done", {@link stepTokens} tokens. */
function stepAnswer(
  options: LanguageModelV3CallOptions,
  stepsPerTurn: number,
  callId: () => string,
): Omit<LanguageModelV3GenerateResult, 'warnings'> {
  const toolCall = stepsTaken(options.prompt) < stepsPerTurn - 1;
  const content: LanguageModelV3Content[] = toolCall
    ? [{ type: 'tool-call', toolCallId: callId(), toolName: offeredNoop(options), input: '{}' }]
    : [{ type: 'text', text: 'done' }];
  const inputTokens = stepTokens / 2;
  const outputTokens = stepTokens - inputTokens;
  return {
    content,
    finishReason: { unified: toolCall ? 'tool-calls' : 'stop', raw: undefined },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  };
}

/** The same answer as the parts of a stream, all available at once (the text in one delta). */
function stepStream(answer: Omit<LanguageModelV3GenerateResult, 'warnings'>): LanguageModelV3StreamResult {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const content of answer.content) {
    if (content.type === 'text')
      parts.push(
        { type: 'text-start', id: 'text' },
        { type: 'text-delta', id: 'text', delta: content.text },
        { type: 'text-end', id: 'text' },
      );
    else if (content.type === 'tool-call') parts.push(content);
  }
  parts.push({ type: 'finish', usage: answer.usage, finishReason: answer.finishReason });
  return {
    stream: new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

/**
 * A real `LanguageModelV3` that answers each turn's first `stepsPerTurn - 1` calls with one call of
 * {@link noopTool} and the next with a text answer, always reporting {@link stepTokens} tokens: a turn
 * of `stepsPerTurn` model calls and `stepsPerTurn - 1` tool calls, decided from the prompt alone. It
 * answers the same through `doGenerate` and `doStream`.
 */
export function createStepModel(stepsPerTurn: number): LanguageModelV3 {
  let calls = 0;
  const callId = () => `bench-${++calls}`;
  return {
    specificationVersion: 'v3',
    provider: 'agents-kit-bench',
    modelId: 'bench-step',
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      return { ...stepAnswer(options, stepsPerTurn, callId), warnings: [] };
    },
    async doStream(options): Promise<LanguageModelV3StreamResult> {
      return stepStream(stepAnswer(options, stepsPerTurn, callId));
    },
  };
}

/**
 * The provider of the bench worker: {@link createStepModel} under every model id but {@link liveModelId},
 * the streaming model of the "first delta → watcher" row (bench/live-output.ts).
 */
export function stepModelProvider(stepsPerTurn: number): ModelProvider {
  const model = createStepModel(stepsPerTurn);
  const live = createLiveModel(stepTokens);
  return {
    name: 'scripted',
    defaultModel: 'bench-step',
    scripted: true,
    model: (modelId) => (modelId === liveModelId ? live : model),
  };
}

/** What the primitive's model activity answers: a tool call for the first steps, then the turn's text. */
export interface StepModelAnswer {
  tokens: number;
  toolCall?: { name: string; input: unknown };
  text?: string;
}

/** The two no-op activities of the bare Temporal step (bench/step-workflows.ts). */
export const stepActivities = {
  /** The "model": a tool call for steps before `steps`, then a text answer; always 20 tokens. */
  async benchModel(call: { step: number; steps: number }): Promise<StepModelAnswer> {
    return call.step < call.steps
      ? { tokens: stepTokens, toolCall: { name: noopTool.name, input: {} } }
      : { tokens: stepTokens, text: 'done' };
  },
  /** The "tool": a short string. */
  async benchTool(_call: { name: string; input: unknown }): Promise<string> {
    return 'ok';
  },
};
