import { ErrorKind, KitError } from '../domain/errors';
import type { McpServerConfig, McpServers } from './mcp-config';
import { McpConnection } from './mcp-connection';

/** Waits for `promise`, or rejects with the signal's reason once it aborts (the promise runs on). */
export function until<Value>(promise: Promise<Value>, signal: AbortSignal): Promise<Value> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/**
 * The worker's connections to its MCP servers (SPEC S11.1): at most one per server, opened on first use
 * and shared by every activity of the worker (MCP multiplexes requests on a connection), opened again
 * after it is lost (a stdio server that exited, an HTTP session the server forgot). `close()` ends them
 * all, stopping stdio servers, when the worker shuts down.
 */
export class McpPool {
  private readonly connections = new Map<string, Promise<McpConnection>>();
  private closed = false;

  constructor(readonly servers: McpServers) {}

  /** The configuration of a server, or undefined when the worker has none of that name. */
  config(server: string): McpServerConfig | undefined {
    return Object.hasOwn(this.servers, server) ? this.servers[server] : undefined;
  }

  /**
   * The live connection to `server`, opening one when there is none. Callers asking while it opens share
   * that attempt; `signal` stops this caller's wait, not the attempt. A failed attempt is not kept: the
   * next caller tries again.
   */
  async connection(server: string, signal: AbortSignal): Promise<McpConnection> {
    const config = this.config(server);
    if (!config)
      throw new KitError(ErrorKind.NotFound, `no MCP server named ${server} in this worker's configuration`);
    for (;;) {
      if (this.closed)
        throw new KitError(ErrorKind.Closed, `the worker is shutting down: MCP server ${server} is closed`);
      let opening = this.connections.get(server);
      if (!opening) {
        opening = McpConnection.open(server, config);
        this.connections.set(server, opening);
        opening.then(
          (connection) => {
            // Closed while it opened: nobody else will close it.
            if (this.closed) void connection.close();
          },
          () => {
            if (this.connections.get(server) === opening) this.connections.delete(server);
          },
        );
      }
      const connection = await until(opening, signal);
      if (!connection.lost) return connection;
      if (this.connections.get(server) === opening) this.connections.delete(server);
      void connection.close();
    }
  }

  /** Closes every connection (stdio servers are stopped); later requests fail with `Closed`. */
  async close(): Promise<void> {
    this.closed = true;
    const opening = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      opening.map((connection) => connection.then((open) => open.close()).catch(() => undefined)),
    );
  }
}
