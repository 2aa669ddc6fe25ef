import { statSync } from 'node:fs';
import { z } from 'zod';
import { KitError, protocolErrorFromZod } from '../domain/errors';
import { isMcpServerName, mcpServerNameRule } from '../domain/mcp-names';

/** The most MCP servers one worker connects to. */
export const maxMcpServers = 32;
/** The largest `AGENTS_KIT_MCP_SERVERS` value, in characters of JSON. */
export const maxMcpServersJson = 256 * 1024;

/**
 * A record whose keys match `key` (a message that names the bad key, where zod says only "Invalid key
 * in record") and that has at most `max` entries.
 */
const recordOf = <Value extends z.ZodType>(
  key: { test(name: string): boolean; expected: string },
  value: Value,
  max: number,
  what: string,
) =>
  z.record(z.string(), value).superRefine((record, context) => {
    const names = Object.keys(record);
    if (names.length > max) context.addIssue({ code: 'custom', message: `at most ${max} ${what}` });
    for (const name of names)
      if (!key.test(name))
        context.addIssue({ code: 'custom', path: [name], message: `"${name}" is not ${key.expected}` });
  });
const pattern = (regex: RegExp, expected: string) => ({ test: (name: string) => regex.test(name), expected });

/** What both transports share: approvals (SPEC S6.1) and how long the server may take. */
const serverCommon = {
  /** Every tool of this server needs a person's approval before it runs. */
  needsApproval: z.boolean().default(false),
  /** Tools of this server (by their MCP names, as the server lists them) that need approval. */
  approvalTools: z.array(z.string().min(1).max(200)).max(500).default([]),
  /** How long one tool call may take before it fails with a Timeout the model sees (default 60 s). */
  timeoutMs: z.number().int().min(100).max(540_000).default(60_000),
  /** How long starting, connecting and listing tools may take (default 15 s). */
  connectTimeoutMs: z.number().int().min(100).max(120_000).default(15_000),
};

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** A server the worker starts as a child process and speaks to over stdin/stdout. */
export const McpStdioServer = z
  .object({
    type: z.literal('stdio'),
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(256).default([]),
    /**
     * The server's environment, on top of HOME, LOGNAME, PATH, SHELL, TERM and USER: nothing else of the
     * worker's environment (its Temporal API key, say) reaches the server.
     */
    env: recordOf(
      pattern(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'an environment variable name'),
      z.string().max(32_768),
      100,
      'variables',
    ).default({}),
    cwd: z.string().min(1).max(4096).refine(isDirectory, 'no such directory').optional(),
    ...serverCommon,
  })
  .strict();
export type McpStdioServer = z.infer<typeof McpStdioServer>;

/** A server reached over MCP's streamable HTTP transport. */
export const McpHttpServer = z
  .object({
    type: z.literal('http'),
    url: z
      .string()
      .max(4096)
      .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
        message: 'expected an http:// or https:// URL',
      }),
    /** Sent with every request (an Authorization header, say). Never logged or put in error messages. */
    headers: recordOf(
      pattern(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,256}$/, 'an HTTP header name'),
      z.string().max(8192),
      64,
      'headers',
    ).default({}),
    ...serverCommon,
  })
  .strict();
export type McpHttpServer = z.infer<typeof McpHttpServer>;

/** The `type` of a server entry that leaves it out: stdio with `command`, streamable HTTP with `url`. */
function withType(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'type' in value) return value;
  if ('command' in value) return { ...value, type: 'stdio' };
  if ('url' in value) return { ...value, type: 'http' };
  return value;
}

/** One MCP server of the worker's configuration (SPEC S11.1). */
export const McpServerConfig = z.preprocess(
  withType,
  z.discriminatedUnion('type', [McpStdioServer, McpHttpServer], {
    error: 'expected "command" (a stdio server) or "url" (a streamable HTTP server)',
  }),
);
export type McpServerConfig = z.infer<typeof McpServerConfig>;
/** A server's entry as a caller writes it: `type` may be left out (`command` means stdio, `url` HTTP). */
export type McpServerConfigInput =
  TypeOptional<z.input<typeof McpStdioServer>> | TypeOptional<z.input<typeof McpHttpServer>>;
type TypeOptional<Entry extends { type: string }> = Omit<Entry, 'type'> & { type?: Entry['type'] };

/**
 * The MCP servers of a worker, by name: the name is the namespace of the server's tools
 * (`github__search_issues`), so it follows {@link mcpServerNameRule}.
 *
 * @example
 * { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"] },
 *   "search": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer …" }, "approvalTools": ["index"] } }
 */
export const McpServers = recordOf(
  { test: isMcpServerName, expected: `a server name: expected ${mcpServerNameRule}` },
  McpServerConfig,
  maxMcpServers,
  'MCP servers',
);
export type McpServers = z.infer<typeof McpServers>;
/** MCP servers as a caller writes them: `type` may be left out, defaults apply. */
export type McpServersInput = Record<string, McpServerConfigInput>;

/**
 * Validates MCP servers; a Protocol KitError's message names `what` and each bad field, and its
 * `details.fields` are full paths (`AGENTS_KIT_MCP_SERVERS.files.command`).
 */
export function parseMcpServers(value: unknown, what = 'mcpServers'): McpServers {
  const result = McpServers.safeParse(value);
  if (result.success) return result.data;
  const error = protocolErrorFromZod(what, result.error);
  const fields = result.error.issues.map((issue) => [what, ...issue.path.map(String)].join('.'));
  throw new KitError(error.kind, error.message, { fields });
}

/** Parses `AGENTS_KIT_MCP_SERVERS` (JSON): a Protocol KitError naming the variable and field when it is wrong. */
export function mcpServersFromJson(raw: string | undefined, variable = 'AGENTS_KIT_MCP_SERVERS'): McpServers {
  if (raw === undefined || raw.trim() === '') return {};
  if (raw.length > maxMcpServersJson)
    throw KitError.protocol(`${variable} is ${raw.length} characters: at most ${maxMcpServersJson}`, {
      fields: [variable],
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw KitError.protocol(
      `${variable} is not JSON (${error instanceof Error ? error.message : String(error)}): expected {"name": {"command": "…", "args": […]}} or {"name": {"url": "https://…"}}`,
      { fields: [variable] },
    );
  }
  return parseMcpServers(parsed, variable);
}
