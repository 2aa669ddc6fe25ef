import { ApplicationFailure } from '@temporalio/common';
import { KitError } from '../domain/errors';
import { builtinTools, runRegisteredTool, type ToolDefinition } from './tools';

export { builtinTools, defineTool, type ToolDefinition } from './tools';

/** What activities need from the process that hosts them. */
export interface ActivityDependencies {
  /** User tools, in addition to (and overriding) the built-in ones. */
  tools?: readonly ToolDefinition[];
}

/** The activities of an agents-kit worker. */
export function createActivities(dependencies: ActivityDependencies = {}) {
  const userNames = new Set((dependencies.tools ?? []).map((tool) => tool.name));
  const tools = [...(dependencies.tools ?? []), ...builtinTools.filter((tool) => !userNames.has(tool.name))];
  return {
    /** Runs one tool call of a thread's turn. KitErrors cross to the workflow typed by kind. */
    async runTool(call: { threadId: string; name: string; input: unknown }): Promise<unknown> {
      try {
        return await runRegisteredTool(tools, call.name, call.input);
      } catch (error) {
        if (error instanceof KitError) throw error.toFailure();
        if (error instanceof ApplicationFailure) throw error;
        throw error;
      }
    },
  };
}
