import { ApplicationFailure } from '@temporalio/common';
import type { GatedToolResult } from '../domain/approval-policy';
import { KitError, objectInput } from '../domain/errors';
import { clipOutput, maxToolOutputChars } from '../domain/transcript';
import { Context } from '@temporalio/activity';
import { mcpServerOf } from '../domain/mcp-names';
import { createModelActivities } from './model';
import type { McpTools } from './mcp-tools';
import type { ModelPrices } from './model-prices';
import { createModelProvider, type ModelProvider } from './providers';
import { builtinTools, checkTool, runRegisteredTool, type ToolDefinition } from './tools';
import { threadWorkflowEnds } from './thread-ends';

export { builtinTools, defineTool, type ToolCallContext, type ToolDefinition } from './tools';
export { createModelProvider, loadModelConfig, type ModelProvider } from './providers';
export { loadModelPrices, type ModelPrices } from './model-prices';
export { createMcpTools, McpTools, type McpTool } from './mcp-tools';
export {
  McpServers,
  mcpServersFromJson,
  parseMcpServers,
  type McpServerConfig,
  type McpServerConfigInput,
  type McpServersInput,
} from './mcp-config';

/** What activities need from the process that hosts them. */
export interface ActivityDependencies {
  /** User tools, in addition to (and overriding) the built-in ones. */
  tools?: readonly ToolDefinition[];
  /** The model provider (SPEC S6.3); the scripted model when omitted. */
  model?: ModelProvider;
  /** SPEC S11.3: prices per model for the usage ledger (`loadModelPrices()` reads AGENTS_KIT_MODEL_PRICES). */
  prices?: ModelPrices;
  /**
   * SPEC S11.1: tools of MCP servers (`createMcpTools(servers)`), offered as `<server>__<tool>` under the
   * same allow-lists and approval rules as user tools. The caller closes it when the worker stops.
   */
  mcp?: McpTools;
}

/** The activities of an agents-kit worker. */
export function createActivities(dependencies: ActivityDependencies = {}) {
  objectInput(dependencies, 'createActivities options');
  const userTools = userToolsOf(dependencies.tools);
  const userNames = new Set(userTools.map((tool) => tool.name));
  const tools = [...userTools, ...builtinTools.filter((tool) => !userNames.has(tool.name))];
  const model = dependencies.model ?? createModelProvider({ AGENTS_KIT_MODEL_PROVIDER: 'scripted' });
  const mcp = dependencies.mcp;
  // An MCP server's namespace is its own: a user tool there would be shadowed, or shadow one of its tools.
  for (const tool of tools) {
    if (mcp?.owns(tool.name))
      throw KitError.protocol(
        `tool ${tool.name}: names starting ${mcpServerOf(tool.name)}__ belong to the MCP server ${mcpServerOf(tool.name)}; rename the tool`,
        { fields: ['tools'] },
      );
  }
  /** SPEC S11.4: whether tool `name` declares needsApproval (an MCP tool: by the worker's MCP config). */
  const toolNeedsApproval = async (name: string, threadId = ''): Promise<boolean> =>
    mcp?.owns(name)
      ? mcp.needsApproval(name, threadId, Context.current().cancellationSignal)
      : tools.find((tool) => tool.name === name)?.needsApproval === true;
  return {
    ...createModelActivities({ provider: model, tools, prices: dependencies.prices, mcp }),
    threadWorkflowEnds,
    /** SPEC S11.4: whether the worker's tool `name` declares needsApproval (false for a tool it does not have). */
    async toolNeedsApproval(call: { name: string; threadId?: string }): Promise<boolean> {
      return toolNeedsApproval(call.name, call.threadId);
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
        if (call.unlessNeedsApproval && (await toolNeedsApproval(call.name, call.threadId)))
          return { type: 'needs-approval' } satisfies GatedToolResult;
        const output = mcp?.owns(call.name)
          ? await runMcpTool(mcp, call)
          : await runRegisteredTool(tools, call.name, call.input);
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

/** An MCP tool call, heartbeating so an interrupt reaches it while the server works (SPEC S4.6). */
async function runMcpTool(mcp: McpTools, call: { threadId: string; name: string; input: unknown }) {
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), 1000);
  try {
    return await mcp.run(call, context.cancellationSignal);
  } finally {
    clearInterval(heartbeat);
  }
}

/** SPEC S2.4: the user tools given, each checked, no name twice (a Protocol KitError naming the tool). */
function userToolsOf(given: unknown): readonly ToolDefinition[] {
  if (given === undefined) return [];
  if (!Array.isArray(given))
    throw KitError.protocol('createActivities: `tools` must be an array of tools (defineTool)', {
      fields: ['tools'],
    });
  const seen = new Set<string>();
  return given.map((definition, index) => {
    const tool = checkTool(definition, `createActivities: tools[${index}]`);
    if (seen.has(tool.name))
      throw KitError.protocol(`createActivities: tools[${index}]: a second tool named ${tool.name}`, {
        fields: ['tools'],
      });
    seen.add(tool.name);
    return tool;
  });
}
