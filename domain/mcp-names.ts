/**
 * How MCP tools are named to models and allow-lists (SPEC S11.1): `<server>__<tool>`. A server's name
 * may not contain `__`, so the text before the first `__` always names the server, and the name of a
 * tool says which server runs it without a lookup.
 */
export const mcpNameSeparator = '__';

/** The longest tool name every provider accepts (OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`). */
export const maxProviderToolName = 64;

/** The characters every provider accepts in a tool name. */
const providerToolName = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether `name` is a tool name every model provider accepts as it is. */
export const isProviderToolName = (name: string): boolean => providerToolName.test(name);

/** The longest MCP server name: its tools' namespaced names keep at least 30 characters of their own. */
export const maxMcpServerName = 32;

const serverName = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

/** Whether `name` may name an MCP server. */
export const isMcpServerName = (name: string): boolean =>
  name.length <= maxMcpServerName && serverName.test(name) && !name.endsWith('_');

/** What an MCP server's name must look like, as error messages say it. */
export const mcpServerNameRule = `1-${maxMcpServerName} characters of A-Z, a-z, 0-9, - and single _ (not __, not first or last), like "github" or "web-search"`;

/** An MCP server's name in the worker's configuration: the namespace of its tools. */

/** The server part of a namespaced tool name (`files` of `files__read`), or undefined when it has none. */
export function mcpServerOf(toolName: string): string | undefined {
  const at = toolName.indexOf(mcpNameSeparator);
  return at > 0 ? toolName.slice(0, at) : undefined;
}

/** A tool's own name as providers accept it: every other character becomes `_` (never empty). */
export const sanitizeToolPart = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
