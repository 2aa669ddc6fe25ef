import { spawn, type ChildProcess } from 'node:child_process';
import { validateJSONRPCMessage, type JSONRPCMessage, type MCPTransport } from '@ai-sdk/mcp';
import { ErrorKind, KitError } from '../domain/errors';
import type { McpStdioServer } from './mcp-config';

/** The most one JSON-RPC line from a server may take: a longer one means the server is broken. */
export const maxStdioLineBytes = 16 * 1024 * 1024;
/** How much of a server's stderr an error message quotes (its last lines). */
const stderrTailChars = 2000;
/** How long a server has to exit after its stdin closes and SIGTERM, before SIGKILL. */
const exitGraceMs = 2000;
/** What a stdio server inherits from the worker's environment (as the AI SDK's own stdio transport does). */
const inheritedEnvironment = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * MCP's stdio transport (newline-delimited JSON-RPC over a child's stdin/stdout) for `@ai-sdk/mcp`'s
 * client. Ours rather than the library's experimental one because a worker runs servers for days: lines
 * are bounded, the server's stderr is kept (its tail explains a crash) instead of mixed into the
 * worker's, the server and anything it started are stopped on close (its process group: SIGTERM, then
 * SIGKILL), and an exit is reported with its code and reason through `onLost`.
 */
export class StdioTransport implements MCPTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrTail = '';
  private closing = false;

  constructor(
    private readonly server: string,
    private readonly config: McpStdioServer,
    /** Called once when the server stops for any reason but our close(), with a reason to show. */
    private readonly onLost: (reason: string) => void,
  ) {}

  /** The server's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error(`MCP server ${this.server}: started twice`));
    const environment: Record<string, string> = {};
    for (const name of inheritedEnvironment) {
      const value = process.env[name];
      if (value !== undefined) environment[name] = value;
    }
    const child = spawn(this.config.command, this.config.args, {
      env: { ...environment, ...this.config.env },
      ...(this.config.cwd ? { cwd: this.config.cwd } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so close() stops what it started too (npx → node, a shell → its command).
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    this.child = child;
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-stderrTailChars);
    });
    // Write errors (EPIPE once the server is gone) surface as the exit below.
    child.stdin!.on('error', () => undefined);
    return new Promise((resolve, reject) => {
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        child.once('close', (code, signal) => this.stopped(code, signal));
        resolve();
      });
      child.on('error', (error: NodeJS.ErrnoException) => {
        // After the start, a failure to signal or write shows as the exit; only a failed start counts.
        if (spawned) return;
        this.child = undefined;
        reject(
          new KitError(
            error.code === 'ENOENT' || error.code === 'EACCES' ? ErrorKind.Protocol : ErrorKind.Integration,
            `MCP server ${this.server}: cannot start ${JSON.stringify(this.config.command)} (${error.code ?? error.message}): check its command and cwd`,
            { server: this.server, fields: [`${this.server}.command`] },
          ),
        );
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable || this.closing)
      return Promise.reject(new KitError(ErrorKind.Integration, `MCP server ${this.server} is not running`));
    return new Promise((resolve, reject) => {
      stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) return this.exited;
    this.closing = true;
    child.stdin?.end();
    this.signal(child, 'SIGTERM');
    const killer = setTimeout(() => this.signal(child, 'SIGKILL'), exitGraceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(killer);
    }
  }

  /** Signals the server's process group (the server alone where there is none). */
  private signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    try {
      if (process.platform === 'win32') child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  }

  private stopped(code: number | null, signal: NodeJS.Signals | null): void {
    this.child = undefined;
    if (!this.closing) {
      const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
      const stderr = this.stderrTail.trim();
      this.onLost(`${how}${stderr ? `; its stderr ended with: ${stderr.slice(-500)}` : ''}`);
    }
    this.onclose?.();
  }

  /** Splits stdout into lines, one JSON-RPC message each. */
  private read(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.pending).toString('utf8');
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      this.deliver(line);
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
    }
    if (this.pendingBytes > maxStdioLineBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onLost(`sent a line over ${maxStdioLineBytes} bytes: stopped`);
      void this.close();
    }
  }

  private deliver(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = validateJSONRPCMessage(JSON.parse(line));
    } catch {
      // A server that logs to stdout breaks the protocol for that line only: skip it.
      this.onerror?.(
        new Error(`MCP server ${this.server} wrote a line that is not JSON-RPC: ${line.slice(0, 200)}`),
      );
      return;
    }
    // The client answers requests and responses; server notifications (logging, list changes) it does
    // not use, and it would report each one as an error.
    if ('method' in message && !('id' in message)) return;
    try {
      this.onmessage?.(message);
    } catch (error) {
      // The client throws on a response to no request of its own (one it gave up on, say).
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
