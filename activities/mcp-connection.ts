import { createMCPClient, type CallToolResult, type ListToolsResult, type MCPClient } from '@ai-sdk/mcp';
import { ErrorKind, KitError } from '../domain/errors';
import type { McpServerConfig } from './mcp-config';
import { StdioTransport } from './mcp-stdio';

/** One tool as its server lists it. */
export type ListedTool = ListToolsResult['tools'][number];

/** The most tools one server may offer; a longer list is cut there (and a warning says so). */
export const maxToolsPerServer = 256;
/** The most pages of `tools/list` read from one server. */
const maxListPages = 20;

/** How an error of `@ai-sdk/mcp` looks (the class is not exported): a brand, maybe a JSON-RPC code or HTTP status. */
interface McpClientError extends Error {
  code?: number;
  statusCode?: number;
}
// Duck-typed, not `instanceof Error`: fetch's errors come from Node's own realm, which is not the
// caller's in a VM context (jest's, say).
const isErrorLike = (value: unknown): value is { message: string; cause?: unknown; code?: unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
const isMcpClientError = (error: unknown): error is McpClientError =>
  isErrorLike(error) &&
  (error as unknown as Record<symbol, unknown>)[Symbol.for('vercel.ai.error.AI_MCPClientError')] === true;

/** Network failures that mean the request never reached the server: trying again is safe. */
const unreachable = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const causeCode = (error: unknown): string | undefined => {
  for (let current = error, hops = 0; isErrorLike(current) && hops < 5; current = current.cause, hops++) {
    if (typeof current.code === 'string') return current.code;
  }
  return undefined;
};
const describe = (error: unknown): string => {
  const message = isErrorLike(error) ? error.message : String(error);
  const code = causeCode(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
};

/** Why a connection to a server was lost: the abort reason of its `lost` signal. */
class ConnectionLost extends Error {}

/** Where an HTTP server is, without credentials or a query that may carry them. */
const whereIs = (config: McpServerConfig): string => {
  if (config.type === 'stdio') return JSON.stringify(config.command);
  const url = new URL(config.url);
  return `${url.origin}${url.pathname}`;
};

/**
 * One live client of one MCP server (SPEC S11.1), through `@ai-sdk/mcp`: stdio (our transport) or
 * streamable HTTP (the library's). Every failure comes out as a KitError that says which server and
 * what to do, and whether running it again is safe: a call that was sent and then timed out or lost its
 * connection may have taken effect, so it is never retryable. Once lost, a connection stays lost (the
 * pool opens a new one).
 */
export class McpConnection {
  private constructor(
    readonly server: string,
    readonly config: McpServerConfig,
    private readonly client: MCPClient,
    private readonly lostSignal: AbortSignal,
    private readonly markLost: (reason: string) => void,
    /** The server's process id (stdio). */
    readonly pid: number | undefined,
  ) {}

  /** Starts (stdio) or reaches (HTTP) the server and runs MCP's initialize handshake. */
  static async open(server: string, config: McpServerConfig): Promise<McpConnection> {
    const lost = new AbortController();
    const markLost = (reason: string) => {
      if (!lost.signal.aborted) lost.abort(new ConnectionLost(reason));
    };
    const stdio = config.type === 'stdio' ? new StdioTransport(server, config, markLost) : undefined;
    // HTTP: the library's streamable HTTP transport; a redirect is refused (headers may carry secrets).
    const transport =
      stdio ??
      (config.type === 'http'
        ? { type: 'http' as const, url: config.url, headers: config.headers, redirect: 'error' as const }
        : undefined)!;
    let client: MCPClient;
    try {
      client = await createMCPClient({
        transport,
        clientName: 'agents-kit',
        initializationOptions: { timeout: config.connectTimeoutMs },
        onUncaughtError: (error) => {
          // An HTTP transport reports a broken event stream (the server went away mid-answer) only here.
          if (config.type === 'http') {
            const reason = httpConnectionLost(error);
            if (reason) markLost(reason);
          }
        },
      });
    } catch (error) {
      throw connectFailure(server, config, error, lost.signal);
    }
    return new McpConnection(server, config, client, lost.signal, markLost, stdio?.pid);
  }

  /** Whether the connection is gone (the server exited, its stream broke, or it was closed). */
  get lost(): boolean {
    return this.lostSignal.aborted;
  }

  /** Every tool the server lists (all pages, at most {@link maxToolsPerServer}). */
  async listTools(signal: AbortSignal): Promise<{ tools: ListedTool[]; cut: boolean }> {
    const timeout = AbortSignal.timeout(this.config.connectTimeoutMs);
    const requestSignal = AbortSignal.any([signal, timeout, this.lostSignal]);
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < maxListPages && tools.length < maxToolsPerServer; page++) {
        const result = await this.client.listTools({
          ...(cursor === undefined ? {} : { params: { cursor } }),
          options: { signal: requestSignal },
        });
        tools.push(...result.tools);
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      throw this.failure(error, { signal, timeout, action: 'listing its tools', sent: false });
    }
    return { tools: tools.slice(0, maxToolsPerServer), cut: tools.length > maxToolsPerServer || !!cursor };
  }

  /** Calls one tool (by its MCP name) and returns the server's result as it is. */
  async callTool(
    tool: ListedTool,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs);
    const executable = this.client.toolsFromDefinitions({ tools: [tool] })[tool.name];
    if (!executable)
      throw new KitError(ErrorKind.NotFound, `MCP server ${this.server} has no tool ${tool.name}`);
    try {
      return (await executable.execute(input, {
        toolCallId: 'agents-kit',
        messages: [],
        abortSignal: AbortSignal.any([signal, timeout, this.lostSignal]),
      })) as CallToolResult;
    } catch (error) {
      throw this.failure(error, { signal, timeout, action: `running tool ${tool.name}`, sent: true });
    }
  }

  /** Closes the client and stops a stdio server; calls in flight fail as lost. */
  async close(): Promise<void> {
    this.markLost('the worker closed the connection');
    await this.client.close().catch(() => undefined);
  }

  /**
   * A request's failure as a KitError. `sent`: the request may have reached the server, so only a
   * failure that proves otherwise may be retried.
   */
  private failure(
    error: unknown,
    request: { signal: AbortSignal; timeout: AbortSignal; action: string; sent: boolean },
  ): unknown {
    const what = `MCP server ${this.server}`;
    // An interrupt: the activity's own cancellation goes back as it is.
    if (request.signal.aborted) return request.signal.reason;
    if (KitError.is(error)) return error;
    const mayHaveRun = request.sent ? '; it may have taken effect, so it is not retried' : '';
    const once = request.sent ? ({ retryable: false } as const) : {};
    if (request.timeout.aborted) {
      const limit = request.sent
        ? `${this.config.timeoutMs} ms (timeoutMs)`
        : `${this.config.connectTimeoutMs} ms (connectTimeoutMs)`;
      return new KitError(
        ErrorKind.Timeout,
        `${what} did not answer ${request.action} within ${limit}${mayHaveRun}`,
        { server: this.server },
        once,
      );
    }
    if (this.lostSignal.aborted) {
      const reason = (this.lostSignal.reason as Error).message;
      return new KitError(
        ErrorKind.Integration,
        `${what} went away while ${request.action} (it ${reason})${mayHaveRun}`,
        { server: this.server },
        once,
      );
    }
    if (isMcpClientError(error) && error.code !== undefined) {
      const kind =
        error.code === -32602
          ? ErrorKind.Protocol
          : error.code === -32601
            ? ErrorKind.NotFound
            : ErrorKind.Integration;
      return new KitError(
        kind,
        `${what} refused ${request.action} (JSON-RPC error ${error.code}): ${error.message}`,
        { server: this.server, code: error.code },
        { retryable: false },
      );
    }
    if (isMcpClientError(error) && error.statusCode !== undefined)
      return httpFailure(this.server, this.config, error, request.action);
    // Nothing was sent: the client was closed under us, or the server could not be reached.
    const notSent =
      /closed client|not running/.test(describe(error)) || unreachable.has(causeCode(error) ?? '');
    if (notSent) this.markLost(describe(error));
    return new KitError(
      ErrorKind.Integration,
      `${what} failed while ${request.action}: ${describe(error)}${notSent ? '' : mayHaveRun}`,
      { server: this.server },
      notSent ? {} : once,
    );
  }
}

/** The reason an HTTP transport error means the connection is gone, or undefined when it does not. */
function httpConnectionLost(error: unknown): string | undefined {
  if (isMcpClientError(error)) {
    if (error.statusCode === 404) return 'no longer knows this session (HTTP 404)';
    return /Maximum reconnection attempts/.test(error.message)
      ? 'stopped answering its event stream'
      : undefined;
  }
  if (isErrorLike(error) && (error as { name?: unknown }).name === 'AbortError') return undefined;
  return `broke the connection (${describe(error)})`;
}

/** A failed HTTP status as a KitError: retryable where the server says it did nothing. */
function httpFailure(
  server: string,
  config: McpServerConfig,
  error: McpClientError,
  action: string,
): KitError {
  const status = error.statusCode!;
  const where = whereIs(config);
  if (status === 401 || status === 403)
    return new KitError(
      ErrorKind.PermissionDenied,
      `MCP server ${server} at ${where} refused the credentials (HTTP ${status}) while ${action}: check its headers`,
      { server, fields: [`${server}.headers`] },
    );
  const retry =
    status === 404 || status === 408 || status === 429 || status === 502 || status === 503 || status === 504;
  return new KitError(
    ErrorKind.Integration,
    `MCP server ${server} at ${where} answered HTTP ${status} while ${action}${retry ? '' : ': not retried'}`,
    { server, status },
    retry ? {} : { retryable: false },
  );
}

/** Why a connection could not be opened, as a KitError. */
function connectFailure(
  server: string,
  config: McpServerConfig,
  error: unknown,
  lost: AbortSignal,
): KitError {
  if (KitError.is(error)) return error;
  const where = whereIs(config);
  // A stdio server that exited says why (its exit code and stderr); an HTTP one, what the request met.
  const exited = config.type === 'stdio' && lost.aborted ? `: it ${(lost.reason as Error).message}` : '';
  if (isMcpClientError(error) && error.statusCode !== undefined) {
    if (error.statusCode === 404 || error.statusCode === 405)
      return new KitError(
        ErrorKind.Protocol,
        `MCP server ${server}: no streamable HTTP MCP endpoint at ${where} (HTTP ${error.statusCode}): check its url`,
        { server, fields: [`${server}.url`] },
      );
    return httpFailure(server, config, error, 'connecting');
  }
  if (/timed out/.test(describe(error)))
    return new KitError(
      ErrorKind.Timeout,
      `MCP server ${server} (${where}) did not finish connecting within ${config.connectTimeoutMs} ms (connectTimeoutMs)${exited}`,
      { server },
    );
  if (/protocol version is not supported/.test(describe(error)))
    return new KitError(ErrorKind.Unsupported, `MCP server ${server} (${where}): ${describe(error)}`, {
      server,
    });
  return new KitError(
    ErrorKind.Integration,
    `MCP server ${server} (${where}) could not be reached: ${exited ? exited.slice(2) : describe(error)}`,
    { server },
  );
}
