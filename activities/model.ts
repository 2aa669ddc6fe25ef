import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { APICallError } from '@ai-sdk/provider';
import { generateText, jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import { z } from 'zod';
import { agentToolDescriptions, agentToolInputs, agentToolNames } from '../domain/agent-tools';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { allTools } from '../domain/schemas';
import { ModelCallInput, type ModelCallOutput, type TranscriptEntry } from '../domain/transcript';
import type { ModelProvider } from './providers';
import type { ToolDefinition } from './tools';

/** The provider's view of a transcript. */
function toModelMessages(transcript: TranscriptEntry[]): ModelMessage[] {
  return transcript.map((entry): ModelMessage => {
    switch (entry.role) {
      case 'user':
        return { role: 'user', content: entry.text };
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
}

/** Provider failures as KitErrors (SPEC S6.5): rate limits and 5xx retry; auth and bad requests do not. */
export function providerFailure(error: unknown): ApplicationFailure {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const body = (error.responseBody ?? '').slice(0, 300);
    if (status === 401 || status === 403) {
      return new KitError(
        ErrorKind.PermissionDenied,
        `the model provider refused the credentials (HTTP ${status}): check the API key. ${body}`,
      ).toFailure();
    }
    if (
      status !== undefined &&
      status >= 400 &&
      status < 500 &&
      status !== 408 &&
      status !== 409 &&
      status !== 429
    ) {
      return new KitError(
        ErrorKind.Protocol,
        `the model provider rejected the request (HTTP ${status}): ${body}`,
      ).toFailure();
    }
    return new KitError(
      ErrorKind.Integration,
      `the model provider failed (HTTP ${status ?? 'no response'}), retrying: ${error.message}`,
    ).toFailure();
  }
  if (error instanceof KitError) return error.toFailure();
  if (error instanceof ApplicationFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new KitError(ErrorKind.Integration, `model call failed: ${message}`).toFailure();
}

/** The model activity: one provider call with the thread's transcript and tool definitions. */
export function createModelActivities(dependencies: {
  provider: ModelProvider;
  tools: readonly ToolDefinition[];
}) {
  const { provider, tools } = dependencies;
  // Tool definitions are built once per worker: converting zod schemas to JSON Schema on every call
  // cost ~0.6 ms of each model call.
  const agentDefinitions: ToolSet = Object.fromEntries(
    agentToolNames.map((name) => [
      name,
      tool({
        description: agentToolDescriptions[name],
        inputSchema: jsonSchema(z.toJSONSchema(agentToolInputs[name]) as never),
      }),
    ]),
  );
  const userDefinitions: ToolSet = Object.fromEntries(
    tools.map((candidate) => [
      candidate.name,
      tool({
        description: candidate.description,
        inputSchema: jsonSchema(
          z.toJSONSchema(candidate.input, { io: 'input', unrepresentable: 'any' }) as never,
        ),
      }),
    ]),
  );
  return {
    async callModel(rawInput: ModelCallInput): Promise<ModelCallOutput> {
      const input = parseInput(ModelCallInput, rawInput, 'model call');
      const allowed = tools.filter(
        (candidate) => input.userTools.includes(allTools) || input.userTools.includes(candidate.name),
      );
      const definitions: ToolSet = input.agentTools ? { ...agentDefinitions } : {};
      for (const candidate of allowed) definitions[candidate.name] = userDefinitions[candidate.name]!;
      const context = Context.current();
      // Heartbeats carry cancellation (an interrupt) to this activity while the provider thinks.
      const heartbeat = setInterval(() => context.heartbeat(), 1000);
      try {
        const modelId = input.model ?? provider.defaultModel;
        const result = await generateText({
          model: provider.model(modelId),
          system: input.system,
          messages: toModelMessages(input.transcript),
          tools: definitions,
          maxRetries: 0,
          abortSignal: context.cancellationSignal,
        });
        return {
          text: result.text,
          toolCalls: result.toolCalls.map((call) => ({
            id: call.toolCallId,
            name: call.toolName,
            input: call.input,
            needsApproval: allowed.some(
              (candidate) => candidate.name === call.toolName && candidate.needsApproval === true,
            ),
            ...(allowed.some((candidate) => candidate.name === call.toolName && candidate.local === true)
              ? { local: true }
              : {}),
          })),
          tokens:
            result.usage.totalTokens ?? (result.usage.inputTokens ?? 0) + (result.usage.outputTokens ?? 0),
          model: `${provider.name}:${modelId}`,
          scripted: provider.scripted,
        };
      } catch (error) {
        if (context.cancellationSignal.aborted) throw error;
        throw providerFailure(error);
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}
