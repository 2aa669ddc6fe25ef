import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request as the test server received it. */
export interface ReceivedRequest {
  body: {
    model: string;
    messages: {
      role: string;
      content: unknown;
      tool_calls?: { function: { name: string; arguments: string } }[];
    }[];
    tools?: {
      type: string;
      function: { name: string; description?: string; parameters: Record<string, unknown> };
    }[];
  };
  bytes: number;
  aborted: boolean;
  /** Tokens the reply reported as used (0 for error replies). */
  tokens: number;
}

/** What the server answers: a status error, or an assistant message (text and/or tool calls), maybe late. */
export type Reply =
  | { status: number; error: string }
  | { text?: string; toolCalls?: { name: string; input: unknown }[]; tokens?: number; delayMs?: number };

/**
 * A real local HTTP server that speaks the OpenAI chat-completions protocol, so the model activity runs
 * the real provider library end to end. `respond` decides each reply from the request.
 */
export async function startOpenAIServer(respond: (request: ReceivedRequest, index: number) => Reply) {
  const requests: ReceivedRequest[] = [];
  let calls = 0;
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    let raw = '';
    incoming.on('data', (chunk) => (raw += chunk));
    incoming.on('end', () => {
      const received: ReceivedRequest = {
        body: JSON.parse(raw),
        bytes: Buffer.byteLength(raw),
        aborted: false,
        tokens: 0,
      };
      requests.push(received);
      outgoing.on('close', () => {
        if (!outgoing.writableFinished) received.aborted = true;
      });
      const reply = respond(received, calls++);
      const send = () => {
        if (received.aborted) return;
        if ('status' in reply) {
          outgoing.writeHead(reply.status, { 'content-type': 'application/json' });
          outgoing.end(JSON.stringify({ error: { message: reply.error, type: 'test_error' } }));
          return;
        }
        const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
          id: `call_${calls}_${index}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.input) },
        }));
        const tokens = reply.tokens ?? 10;
        received.tokens = tokens;
        outgoing.writeHead(200, { 'content-type': 'application/json' });
        outgoing.end(
          JSON.stringify({
            id: `chatcmpl-${calls}`,
            object: 'chat.completion',
            created: 1_700_000_000,
            model: received.body.model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: reply.text ?? null,
                  ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
                },
                finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: tokens - 1, completion_tokens: 1, total_tokens: tokens },
          }),
        );
      };
      if ('delayMs' in reply && reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** The system prompt of a request (it names the agent's path). */
export const systemOf = (request: ReceivedRequest): string =>
  request.body.messages
    .filter((message) => message.role === 'system')
    .map((message) => String(message.content))
    .join('\n');

/** The tool results in a request, by tool name. */
export const toolResultsOf = (request: ReceivedRequest): { name: string; content: string }[] => {
  const names = new Map<string, string>();
  for (const message of request.body.messages) {
    for (const call of message.tool_calls ?? [])
      names.set((call as unknown as { id: string }).id, call.function.name);
  }
  return request.body.messages
    .filter((message) => message.role === 'tool')
    .map((message) => ({
      name: names.get((message as unknown as { tool_call_id: string }).tool_call_id) ?? '?',
      content: String(message.content),
    }));
};
