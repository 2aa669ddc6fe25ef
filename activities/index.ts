import { ApplicationFailure } from '@temporalio/common';
import type { GatedToolResult } from '../domain/approval-policy';
import { KitError } from '../domain/errors';
import { clipOutput, maxToolOutputChars } from '../domain/transcript';
import { createModelActivities } from './model';
import type { ModelPrices } from './model-prices';
import { createModelProvider, type ModelProvider } from './providers';
import { builtinTools, runRegisteredTool, type ToolDefinition } from './tools';

export { builtinTools, defineTool, type ToolDefinition } from './tools';
export { createModelProvider, loadModelConfig, type ModelProvider } from './providers';
export { loadModelPrices, type ModelPrices } from './model-prices';

/** What activities need from the process that hosts them. */
export interface ActivityDependencies {
  /** User tools, in addition to (and overriding) the built-in ones. */
  tools?: readonly ToolDefinition[];
  /** The model provider (SPEC S6.3); the scripted model when omitted. */
  model?: ModelProvider;
  /** SPEC S11.3: prices per model for the usage ledger (`loadModelPrices()` reads AGENTS_KIT_MODEL_PRICES). */
  prices?: ModelPrices;
}

/** The activities of an agents-kit worker. */
export function createActivities(dependencies: ActivityDependencies = {}) {
  const userNames = new Set((dependencies.tools ?? []).map((tool) => tool.name));
  const tools = [...(dependencies.tools ?? []), ...builtinTools.filter((tool) => !userNames.has(tool.name))];
  const model = dependencies.model ?? createModelProvider({ AGENTS_KIT_MODEL_PROVIDER: 'scripted' });
  return {
    ...createModelActivities({ provider: model, tools, prices: dependencies.prices }),
    /** SPEC S11.4: whether the worker's tool `name` declares needsApproval (false for a tool it does not have). */
    async toolNeedsApproval(call: { name: string }): Promise<boolean> {
      return tools.find((tool) => tool.name === call.name)?.needsApproval === true;
    },
    /** Runs one tool call of a thread's turn. KitErrors cross to the workflow typed by kind. */
    async runTool(call: {
      threadId: string;
      name: string;
      input: unknown;
      /** SPEC S11.4: run it only when the tool does not declare needsApproval (a GatedToolResult). */
      unlessNeedsApproval?: true;
    }): Promise<unknown> {
      try {
        if (call.unlessNeedsApproval && tools.find((tool) => tool.name === call.name)?.needsApproval)
          return { type: 'needs-approval' } satisfies GatedToolResult;
        const output = await runRegisteredTool(tools, call.name, call.input);
        // Large outputs are cut here, so they never enter workflow history whole (SPEC S7.5).
        const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
        const clipped = text.length > maxToolOutputChars ? clipOutput(text) : output;
        return call.unlessNeedsApproval
          ? ({ type: 'ran', output: clipped } satisfies GatedToolResult)
          : clipped;
      } catch (error) {
        if (KitError.is(error)) throw error.toFailure();
        if (error instanceof ApplicationFailure) throw error;
        throw error;
      }
    },
  };
}
