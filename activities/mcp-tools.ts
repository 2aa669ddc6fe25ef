import type { CallToolResult } from '@ai-sdk/mcp';
import type { JSONSchema7 } from '@ai-sdk/provider';
import { ErrorKind, KitError } from '../domain/errors';
import { mcpServerOf } from '../domain/mcp-names';
import { LatestMap, TurnCache } from './mcp-cache';
import { parseMcpServers, type McpServers, type McpServersInput } from './mcp-config';
import { maxToolsPerServer, type ListedTool } from './mcp-connection';
import { namespaceTools } from './mcp-naming';
import { McpPool, until } from './mcp-pool';

/** An MCP tool as agents see it: its namespaced name, where it runs, and whether a person approves it first. */
export interface McpTool {
  /** `<server>__<tool>`, provider-legal: what models call and allow-lists name. */
  name: string;
  server: string;
  /** The tool as its server listed it (its own name, schema, annotations). */
  definition: ListedTool;
  description: string;
  inputSchema: JSONSchema7;
  /** The server's `needsApproval`, or the tool's MCP name in its `approvalTools`. */
  needsApproval: boolean;
}

/** A server's tools as one turn sees them, by namespaced name. */
type ServerTools = ReadonlyMap<string, McpTool>;

/** What one model call or tool call is part of: the thread and, when known, its turn. */
export interface McpCallSite {
  threadId: string;
  turn?: number | undefined;
}

/** The longest description offered to a model, and the largest input schema (JSON characters). */
const maxDescriptionChars = 4096;
const maxSchemaChars = 64 * 1024;
/** The most characters of a failed tool's own error text quoted to the model. */
const maxErrorChars = 4000;

/** An MCP result as the text a transcript keeps: text as it is, other content described in one line. */
export function resultText(result: CallToolResult): string {
  if ('toolResult' in result)
    return typeof result.toolResult === 'string'
      ? result.toolResult
      : JSON.stringify(result.toolResult ?? null);
  const parts = result.content.map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'image':
        return `(image, ${part.mimeType}, not shown)`;
      case 'resource':
        return 'text' in part.resource
          ? part.resource.text
          : `(resource ${part.resource.uri}, binary, not shown)`;
      case 'resource_link':
        return `(resource link ${part.uri})`;
      default:
        return JSON.stringify(part);
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/**
 * The MCP tools of a worker (SPEC S11.1), for {@link createActivities}: the servers of its
 * configuration behind one pool of connections, each server's tool list fetched once per turn and
 * namespaced `<server>__<tool>`. A server that is down leaves its tools out of a model call (or offers
 * the list it last gave, so a call fails with a clear error the model reads) and fails only the tool
 * calls made to it. Close it when the worker stops.
 *
 * @example
 * const mcp = createMcpTools({ files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'] } });
 * const worker = await createAgentWorker({ connection, taskQueue, activities: createActivities({ mcp }) });
 * try { await worker.run(); } finally { await mcp.close(); }
 */
export class McpTools {
  readonly pool: McpPool;
  private readonly lists = new TurnCache<ServerTools>({
    maxEntries: 4096,
    ttlMs: 15 * 60_000,
    failureTtlMs: 30_000,
  });
  /** Each thread's latest turn here: a tool call finds the list its model call was offered. */
  private readonly turns = new LatestMap<number>(4096);
  /** Each server's last good list, and the JSON of its definitions (an unchanged list is shared). */
  private readonly lastGood = new Map<string, { tools: ServerTools; signature: string }>();
  /** Shared loads run until the tools are closed, whichever caller started them. */
  private readonly closing = new AbortController();

  constructor(
    servers: McpServers | McpServersInput,
    private readonly log: (message: string) => void = (message) => console.warn(`[agents-kit] ${message}`),
  ) {
    this.pool = new McpPool(parseMcpServers(servers));
  }

  /** The configured servers' names, sorted. */
  get servers(): string[] {
    return Object.keys(this.pool.servers).sort();
  }

  /** Whether `name` is in the namespace of a configured server (so only that server may run it). */
  owns(name: string): boolean {
    const server = mcpServerOf(name);
    return server !== undefined && this.pool.config(server) !== undefined;
  }

  /**
   * The tools a model call may be offered: every tool of every server that `allowed` permits. Servers
   * are read once per turn of the thread; one that cannot be read is left out (its last good list is
   * offered when there is one), with a warning.
   */
  async offered(
    site: McpCallSite,
    allowed: (name: string) => boolean,
    signal: AbortSignal,
  ): Promise<McpTool[]> {
    if (site.turn !== undefined) this.turns.set(site.threadId, site.turn);
    const lists = await Promise.all(
      this.servers.map(async (server) => {
        try {
          return await until(this.listFor(server, site), signal);
        } catch (error) {
          if (signal.aborted) throw error;
          const stale = this.lastGood.get(server)?.tools;
          this.log(
            `${error instanceof Error ? error.message : String(error)}; ${stale ? 'offering the tools it listed last' : 'its tools are left out of this call'}`,
          );
          return stale ?? new Map<string, McpTool>();
        }
      }),
    );
    return lists.flatMap((tools) => [...tools.values()].filter((tool) => allowed(tool.name)));
  }

  /**
   * Runs one MCP tool call and returns its text. A server that is down, slow or answers with an error
   * fails the call with a KitError that says so (the model reads it as the tool's result); one that may
   * have run the call is never retried.
   */
  async run(call: { threadId: string; name: string; input: unknown }, signal: AbortSignal): Promise<string> {
    const server = mcpServerOf(call.name);
    if (server === undefined || !this.pool.config(server))
      throw new KitError(ErrorKind.NotFound, `no MCP server of this worker has a tool named ${call.name}`);
    const input = call.input ?? {};
    if (typeof input !== 'object' || Array.isArray(input))
      throw KitError.protocol(
        `input of tool ${call.name}: expected a JSON object, got ${Array.isArray(input) ? 'an array' : typeof input}`,
      );
    const tool = await this.find(server, call.name, call.threadId, signal);
    const connection = await this.pool.connection(server, signal);
    const result = await connection.callTool(tool.definition, input as Record<string, unknown>, signal);
    const text = resultText(result);
    if ('isError' in result && result.isError)
      throw new KitError(
        ErrorKind.Integration,
        `MCP tool ${call.name} reported an error: ${text.slice(0, maxErrorChars) || '(no message)'}`,
        { server, tool: tool.definition.name },
        { retryable: false },
      );
    return text;
  }

  /**
   * SPEC S11.4: whether MCP tool `name` needs approval by the worker's configuration (the server's
   * `needsApproval`, or the tool in its `approvalTools`), from the list last read of its server.
   */
  async needsApproval(name: string, threadId: string, signal: AbortSignal): Promise<boolean> {
    const server = mcpServerOf(name);
    const config = server === undefined ? undefined : this.pool.config(server);
    if (!config) return false;
    if (config.needsApproval) return true;
    if (config.approvalTools.length === 0) return false;
    return (await this.find(server!, name, threadId, signal)).needsApproval;
  }

  /** Closes every connection (stopping stdio servers); calls after this fail with `Closed`. */
  async close(): Promise<void> {
    this.closing.abort(new KitError(ErrorKind.Closed, 'the MCP tools of this worker are closed'));
    await this.pool.close();
  }

  /** The tool `name` of `server`, from the list this thread's turn was offered, else a fresh one. */
  private async find(server: string, name: string, threadId: string, signal: AbortSignal): Promise<McpTool> {
    const turn = this.turns.get(threadId);
    const cached = turn === undefined ? undefined : this.lists.peek(listKey(server, { threadId, turn }));
    const known = cached ? await until(cached, signal).catch(() => undefined) : undefined;
    const tools = known?.has(name) ? known : await until(this.load(server), signal);
    const tool = tools.get(name);
    if (!tool) {
      const offered = [...tools.keys()].slice(0, 50).join(', ') || 'no tools';
      throw new KitError(
        ErrorKind.NotFound,
        `MCP server ${server} has no tool ${name} (it offers ${offered})`,
        { server },
        {},
      );
    }
    return tool;
  }

  /** A server's tools for one call site: cached per turn when the turn is known. */
  private listFor(server: string, site: McpCallSite): Promise<ServerTools> {
    if (site.turn === undefined) return this.load(server);
    return this.lists.get(listKey(server, { threadId: site.threadId, turn: site.turn }), () =>
      this.load(server),
    );
  }

  /** Reads a server's tool list and names its tools. */
  private async load(server: string): Promise<ServerTools> {
    const config = this.pool.config(server)!;
    const connection = await this.pool.connection(server, this.closing.signal);
    const { tools, cut } = await connection.listTools(this.closing.signal);
    if (cut)
      this.log(
        `MCP server ${server} lists more than ${maxToolsPerServer} tools: only the first ${maxToolsPerServer} are offered`,
      );
    // Turns of many threads hold lists: an unchanged one is the same object, not a copy per turn.
    const signature = JSON.stringify(tools);
    const last = this.lastGood.get(server);
    if (last?.signature === signature) return last.tools;
    const names = namespaceTools(
      server,
      tools.map((tool) => tool.name),
    );
    const named = new Map<string, McpTool>();
    const seen = new Set<string>();
    for (const definition of tools) {
      if (seen.has(definition.name)) continue;
      seen.add(definition.name);
      const inputSchema = {
        ...definition.inputSchema,
        properties: definition.inputSchema.properties ?? {},
      } as JSONSchema7;
      if (JSON.stringify(inputSchema).length > maxSchemaChars) {
        this.log(
          `MCP server ${server}: tool ${definition.name} has an input schema over ${maxSchemaChars} characters; left out`,
        );
        continue;
      }
      const name = names.get(definition.name)!;
      named.set(name, {
        name,
        server,
        definition,
        description: (
          definition.description ??
          definition.title ??
          `${definition.name} (MCP server ${server})`
        ).slice(0, maxDescriptionChars),
        inputSchema,
        needsApproval: config.needsApproval || config.approvalTools.includes(definition.name),
      });
    }
    this.lastGood.set(server, { tools: named, signature });
    return named;
  }
}

const listKey = (server: string, site: { threadId: string; turn: number }) =>
  `${server}\n${site.threadId}\n${site.turn}`;

/** The MCP tools of `servers` (validated: a Protocol KitError names the bad field). */
export function createMcpTools(
  servers: McpServers | McpServersInput,
  options: { log?: (message: string) => void } = {},
): McpTools {
  return new McpTools(servers, options.log);
}
