import { matching } from './ids';

/** `*` in a tool list stands for every tool the worker has. */
export const allTools = '*';

/** A tool's name (`*` for all): letters, digits and `_ - . : /`, as model providers and MCP name tools. */
export const ToolName = matching(
  /^(\*|[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,99})$/,
  'expected 1-100 characters of A-Z, a-z, 0-9, _ - . : / (or * for all tools)',
);
