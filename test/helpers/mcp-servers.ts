import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { McpServerConfigInput } from '../../activities/mcp-config';
import { projectRoot } from './paths';

/** The test server's tool whose name is longer than any provider accepts, so it must be shortened. */
export const longToolName = `summarize_${'very_'.repeat(12)}long_documents`;

const serverScript = join(__dirname, 'mcp-server.ts');

/** The test MCP server (test/helpers/mcp-server.ts) as a stdio server entry, started by the pool itself. */
export function stdioServer(
  options: { env?: Record<string, string> } & Partial<Omit<McpServerConfigInput, 'type'>> = {},
): McpServerConfigInput {
  return {
    type: 'stdio',
    command: process.execPath,
    args: ['--import', 'tsx', serverScript, 'stdio'],
    cwd: projectRoot,
    // Connecting starts node and tsx: generous, so a busy machine is not a failure.
    connectTimeoutMs: 60_000,
    ...options,
  } as McpServerConfigInput;
}

/** A running HTTP test server process. */
export interface HttpMcpServer {
  url: string;
  port: number;
  pid: number;
  /** SIGKILL: the server vanishes mid-whatever, as a crashed host does. */
  kill(): Promise<void>;
}

/** Starts the test MCP server over streamable HTTP in its own process (on `port`, or any free one). */
export async function startHttpMcpServer(
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<HttpMcpServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', serverScript, 'http', String(options.port ?? 0)],
    { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...options.env } },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(new Error(`the MCP test server exited (${code}) before it listened`)),
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    pid: child.pid!,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Whether a process is alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
