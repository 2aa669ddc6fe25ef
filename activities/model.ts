import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { APICallError, type JSONSchema7 } from '@ai-sdk/provider';
import { z } from 'zod';
import { agentTools, agentToolNames } from '../domain/operations';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { allowsTool } from '../domain/tool-allow-list';
import { ModelCallInput, type ModelCallOutput } from '../domain/transcript';
import { boundReply } from '../domain/model-reply';
import type { LiveTarget } from '../domain/live-output';
import { LiveOutputSink } from './live-output-sink';
import { TranscriptCache } from './transcript-cache';
import { callLanguageModel, type ToolSpec } from './model-call';
import { costOf, priceOf, type ModelPrices } from './model-prices';
import { ModelMetrics } from './model-metrics';
import type { ModelProvider } from './providers';
import type { McpTool, McpTools } from './mcp-tools';
import type { ToolDefinition } from './tools';

/** The most a provider's Retry-After holds a call back (a longer one is taken as this). */
const maxRetryAfterMs = 5 * 60_000;

/**
 * A provider's Retry-After (seconds, or an HTTP date) in ms, within 0 to {@link maxRetryAfterMs}; none
 * (Temporal's backoff) when it is absent or unreadable.
 */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(header) ? Number(header) * 1000 : Date.parse(header) - now;
  return Number.isFinite(seconds) ? Math.min(maxRetryAfterMs, Math.max(0, Math.round(seconds))) : undefined;
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
      `the model provider failed (HTTP ${status ?? 'no response'}; retryable): ${error.message}`,
    ).toFailure(retryAfterMs(error.responseHeaders?.['retry-after']));
  }
  if (error instanceof KitError) return error.toFailure();
  if (error instanceof ApplicationFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new KitError(ErrorKind.Integration, `model call failed: ${message}`).toFailure();
}

/** The sink of a call that streams (SPEC S10.1); none where the worker has no client (a mock environment). */
function liveSink(target: LiveTarget): LiveOutputSink | undefined {
  const context = Context.current();
  let client: Client;
  try {
    client = context.client;
  } catch {
    return undefined;
  }
  return new LiveOutputSink(client, target, context.info.attempt);
}

const ModelPriceRequest = z.object({ model: z.string().min(1).max(200).optional() }).strict();

/** The model activity: one provider call with the thread's transcript and tool definitions. */
export function createModelActivities(dependencies: {
  provider: ModelProvider;
  tools: readonly ToolDefinition[];
  /** SPEC S11.3: the price table a call's cost is computed with (none: every call costs 0). */
  prices?: ModelPrices | undefined;
  /** SPEC S11.1: tools of MCP servers, offered under the same allow-list as the others. */
  mcp?: McpTools | undefined;
}) {
  const { provider, tools } = dependencies;
  const prices = dependencies.prices ?? {};
  // What this worker's calls were sent of each thread's transcript (the `transcriptDelta` feature).
  const transcripts = new TranscriptCache();
  // Tool definitions are built once per worker: converting zod schemas to JSON Schema on every call
  // cost ~0.6 ms of each model call.
  const agentSpecs: ToolSpec[] = agentToolNames.map((name) => ({
    name,
    description: agentTools[name].description,
    inputSchema: z.toJSONSchema(agentTools[name].input) as JSONSchema7,
  }));
  const userSpecs = new Map<string, ToolSpec>(
    tools.map((candidate) => [
      candidate.name,
      {
        name: candidate.name,
        description: candidate.description,
        inputSchema: z.toJSONSchema(candidate.input, { io: 'input', unrepresentable: 'any' }) as JSONSchema7,
      },
    ]),
  );
  return {
    /**
     * SPEC S11.3: the prices of `model` (the worker's default model when none is named) in the worker's
     * table, US dollars per million tokens, so a call is held to a budget in dollars before it starts.
     */
    async modelPrice(request: { model?: string }): Promise<{ model: string; input: number; output: number }> {
      const { model } = parseInput(ModelPriceRequest, request, 'model price request');
      const id = model ?? provider.defaultModel;
      const qualified = `${provider.name}:${id}`;
      return { model: qualified, ...priceOf(prices, { qualified, id }) };
    },
    async callModel(rawInput: ModelCallInput): Promise<ModelCallOutput> {
      const input = parseInput(ModelCallInput, rawInput, 'model call');
      const allowed = tools.filter((candidate) => allowsTool(input.userTools, candidate.name));
      // A user tool of an agent tool's name replaces it, as it did in one tool set.
      const offered = new Map<string, ToolSpec>(
        input.agentTools ? agentSpecs.map((spec) => [spec.name, spec]) : [],
      );
      for (const candidate of allowed) offered.set(candidate.name, userSpecs.get(candidate.name)!);
      const context = Context.current();
      const modelId = input.model ?? provider.defaultModel;
      const model = `${provider.name}:${modelId}`;
      const metrics = new ModelMetrics(context.metricMeter);
      const started = Date.now();
      // Heartbeats carry cancellation (an interrupt) to this activity while the provider thinks.
      const heartbeat = setInterval(() => context.heartbeat(), 1000);
      const sink = input.live ? liveSink(input.live) : undefined;
      const mcpTools = new Map<string, McpTool>();
      try {
        // SPEC S11.1: read once per turn of the thread; a server that is down is left out, not fatal.
        for (const tool of dependencies.mcp
          ? await dependencies.mcp.offered(
              { threadId: input.threadId, turn: input.call?.turn },
              (name) => allowsTool(input.userTools, name),
              context.cancellationSignal,
            )
          : []) {
          mcpTools.set(tool.name, tool);
          offered.set(tool.name, {
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          });
        }
        const answer = await callLanguageModel(provider.model(modelId), {
          system: input.system,
          transcript: await transcripts.whole(input, () => context.client),
          tools: [...offered.values()],
          abortSignal: context.cancellationSignal,
          ...(sink ? { onText: (delta: string) => sink.push(delta) } : {}),
          maxOutputTokens: input.maxOutputTokens,
        });
        metrics.record(model, 'completed', Date.now() - started, answer.usage);
        await sink?.finish('finished');
        const reply = boundReply(answer);
        return {
          text: reply.text,
          toolCalls: reply.toolCalls.map((call) => {
            const tool = allowed.find((candidate) => candidate.name === call.name);
            return {
              ...call,
              needsApproval: tool?.needsApproval === true || mcpTools.get(call.name)?.needsApproval === true,
              ...(tool?.local === true ? { local: true } : {}),
            };
          }),
          tokens: answer.tokens,
          usage: {
            ...answer.usage,
            costUsd: costOf(prices, { qualified: model, id: modelId }, answer.usage),
          },
          model,
          scripted: provider.scripted,
        };
      } catch (error) {
        const aborted = context.cancellationSignal.aborted;
        metrics.record(model, aborted ? 'interrupted' : 'failed', Date.now() - started);
        await sink?.finish(aborted ? 'interrupted' : 'failed');
        if (context.cancellationSignal.aborted) throw error;
        throw providerFailure(error);
      } finally {
        clearInterval(heartbeat);
      }
    },
  };
}
