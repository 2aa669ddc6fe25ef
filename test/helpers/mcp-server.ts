// A real MCP server process for the tests, built with the official SDK (@modelcontextprotocol/sdk):
//   node --import tsx test/helpers/mcp-server.ts stdio
//   node --import tsx test/helpers/mcp-server.ts http [port]   (prints `listening <port>` when ready)
// Environment: MCP_TEST_NOTES (a file `remember` appends to), MCP_TEST_TOKEN (HTTP: the bearer token
// every request must carry), MCP_TEST_CRASH (exit at start with this text on stderr).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { longToolName } from './mcp-servers';

/** What this process has been asked, for tests that count requests (tool lists once per turn). */
const stats = { listCalls: 0, toolCalls: 0 };

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

function buildServer(): McpServer {
  const server = new McpServer({ name: 'agents-kit-test-server', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => text(String(a + b)),
  );
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: { text: z.string() } },
    async (input) => text(input.text),
  );
  server.registerTool(
    'slow',
    { description: 'Answers after `ms` milliseconds.', inputSchema: { ms: z.number().int().min(0) } },
    async ({ ms }) => {
      // Tests wait for this line before they break the server mid-call.
      if (process.env.MCP_TEST_NOTES) appendFileSync(process.env.MCP_TEST_NOTES, `slow started ${ms}\n`);
      await new Promise((done) => setTimeout(done, ms));
      return text(`done after ${ms} ms`);
    },
  );
  server.registerTool('fail', { description: 'Always fails, as a tool does.' }, async () => ({
    content: [{ type: 'text' as const, text: 'the disk is on fire' }],
    isError: true,
  }));
  server.registerTool('pid', { description: "The server's process id." }, async () =>
    text(String(process.pid)),
  );
  server.registerTool(
    'stats',
    { description: 'How many lists and calls this process has served.' },
    async () => text(JSON.stringify(stats)),
  );
  server.registerTool(
    'remember',
    { description: 'Writes a note down (to MCP_TEST_NOTES).', inputSchema: { note: z.string() } },
    async ({ note }) => {
      appendFileSync(process.env.MCP_TEST_NOTES ?? '/dev/null', `${note}\n`);
      return text(`noted: ${note}`);
    },
  );
  // Names providers do not accept as they are: a dot, a clash once cleaned, and a long one.
  server.registerTool('read.file', { description: 'Reads a file (dotted name).' }, async () =>
    text('dotted'),
  );
  server.registerTool('read_file', { description: 'Reads a file (underscored name).' }, async () =>
    text('underscored'),
  );
  server.registerTool(longToolName, { description: 'A tool with a very long name.' }, async () =>
    text('long'),
  );
  return server;
}

/** Connects a server to a transport, counting the tool lists and calls that arrive on it. */
async function serve(transport: Transport): Promise<void> {
  await buildServer().connect(transport);
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && message.method === 'tools/list') stats.listCalls++;
    if ('method' in message && message.method === 'tools/call') stats.toolCalls++;
    deliver?.(message, extra);
  };
}

async function serveHttp(port: number): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const token = process.env.MCP_TEST_TOKEN;
  const http = createServer((request, response) => {
    void (async () => {
      if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') {
        response.writeHead(404).end('not found');
        return;
      }
      if (token && request.headers.authorization !== `Bearer ${token}`) {
        response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const sessionId = request.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (typeof sessionId === 'string' && !transport) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
        return;
      }
      if (!transport) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, fresh),
        });
        fresh.onclose = () => {
          if (fresh.sessionId) sessions.delete(fresh.sessionId);
        };
        await serve(fresh);
        transport = fresh;
      }
      await transport.handleRequest(request, response);
    })().catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((listening) => http.listen(port, '127.0.0.1', listening));
  process.stdout.write(`listening ${(http.address() as AddressInfo).port}\n`);
}

async function main(): Promise<void> {
  if (process.env.MCP_TEST_CRASH) {
    process.stderr.write(`${process.env.MCP_TEST_CRASH}\n`);
    process.exit(3);
  }
  const [mode, port] = process.argv.slice(2);
  if (mode === 'stdio') {
    await serve(new StdioServerTransport());
    // The client closing stdin ends the server, as MCP's stdio transport says.
    process.stdin.on('end', () => process.exit(0));
  } else if (mode === 'http') {
    await serveHttp(Number(port ?? 0));
  } else {
    throw new Error(`usage: mcp-server.ts stdio | http [port] (got ${mode})`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
