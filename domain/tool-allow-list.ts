/**
 * Tool allow-lists (SPEC S4.1, S11.1): which tools a thread may be offered and may run. One rule for
 * every kind of tool — built-in, user, and MCP tools (named `server__tool`) — applied by the model
 * activity when it offers tool definitions and by the thread's workflow before it runs a call.
 */

import { allTools } from './tool-names';

/** `*` in a tool allow-list allows every tool the worker has (MCP tools included). */
export { allTools };

/** Whether an allow-list permits a tool. */
export const allowsTool = (tools: readonly string[], name: string): boolean =>
  tools.includes(allTools) || tools.includes(name);

/** A child's tools: what it asks for, intersected with its parent's (SPEC S4.1); its parent's when it asks for nothing. */
export function narrowTools(
  parentTools: readonly string[],
  requested: readonly string[] | undefined,
): string[] {
  if (!requested) return [...parentTools];
  return requested.filter((tool) =>
    tool === allTools ? parentTools.includes(allTools) : allowsTool(parentTools, tool),
  );
}
