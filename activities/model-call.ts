import type {
  JSONSchema7,
  LanguageModelV3,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import type { TranscriptEntry } from '../domain/transcript';
import { readModelStream, startStream } from './model-stream';

/** A tool as the provider is told of it: name, description, JSON Schema of its input. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JSONSchema7;
}

/** What one model call answered. */
export interface ModelAnswer {
  text: string;
  toolCalls: { id: string; name: string; input: unknown }[];
  tokens: number;
  /** What the provider reported, input and output apart (SPEC S11.3). */
  usage: { inputTokens: number; outputTokens: number };
}

/** A transcript as the provider interface's prompt (LanguageModelV3), the system prompt first. */
export function toPrompt(system: string, transcript: readonly TranscriptEntry[]): LanguageModelV3Prompt {
  const messages = transcript.map((entry): LanguageModelV3Message => {
    switch (entry.role) {
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: entry.text }] };
      case 'assistant':
        return {
          role: 'assistant',
          content: [
            ...(entry.text ? [{ type: 'text' as const, text: entry.text }] : []),
            ...entry.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.name,
              input: call.input,
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: entry.results.map((result) => ({
            type: 'tool-result' as const,
            toolCallId: result.id,
            toolName: result.name,
            output: result.isError
              ? { type: 'error-text' as const, value: result.output }
              : { type: 'text' as const, value: result.output },
          })),
        };
    }
  });
  return [{ role: 'system', content: system }, ...messages];
}

/**
 * One call of the provider's model through its own interface (`doStream`, what the `ai` package's
 * `streamText` calls underneath), without `generateText`/`streamText` around it: they re-validated the
 * whole prompt with zod on every call, ~40 ms of each step for a 144 KiB transcript. The transcript is
 * ours and already well-formed. The answer streams (SPEC S10.1): `onText` gets each text delta as it is
 * read, synchronously and in order (the caller batches them).
 */
export async function callLanguageModel(
  model: LanguageModelV3,
  request: {
    system: string;
    transcript: readonly TranscriptEntry[];
    tools: readonly ToolSpec[];
    abortSignal: AbortSignal;
    onText?: (delta: string) => void;
    /** The most the model may answer; the provider stops it there (SPEC S11.3). */
    maxOutputTokens?: number | undefined;
  },
): Promise<ModelAnswer> {
  const tools: LanguageModelV3FunctionTool[] = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
  const stream = await startStream(
    model.doStream({
      prompt: toPrompt(request.system, request.transcript),
      ...(tools.length > 0 ? { tools, toolChoice: { type: 'auto' as const } } : {}),
      ...(request.maxOutputTokens ? { maxOutputTokens: request.maxOutputTokens } : {}),
      abortSignal: request.abortSignal,
    }),
    request.abortSignal,
  );
  return readModelStream(stream, { abortSignal: request.abortSignal, onText: request.onText });
}
