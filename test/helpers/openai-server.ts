import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createModelProvider, loadModelConfig } from '../../activities/providers';

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
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
  };
  bytes: number;
  /** Whether the client went away before the reply (streamed or not) was complete. */
  aborted: boolean;
  /** Tokens the reply reported as used (0 for error replies, and for a stream cut before its usage). */
  tokens: number;
}

/**
 * What the server answers: a status error, or an assistant message (text and/or tool calls), maybe late
 * (`delayMs` before the first byte). A streamed reply pauses `chunkDelayMs` between its chunks.
 */
export type Reply =
  | { status: number; error: string }
  | {
      text?: string;
      toolCalls?: { name: string; input: unknown }[];
      tokens?: number;
      delayMs?: number;
      chunkDelayMs?: number;
    };

type Answer = Exclude<Reply, { status: number }>;

/** A reply's tool calls as OpenAI sends them. */
interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One server-sent event of a streamed reply; `tokens` when it is the one reporting usage. */
interface StreamEvent {
  data: string;
  tokens?: number;
}

/** A reply's word pieces, each with the whitespace after it, so they join to the text exactly. */
const wordsOf = (text: string): string[] => text.match(/\s*\S+\s*|\s+/g) ?? [];

/** The events of a streamed reply, as OpenAI sends them: role, text, tool calls, finish, usage, [DONE]. */
function streamEvents(
  request: ReceivedRequest,
  reply: Answer,
  id: string,
  toolCalls: WireToolCall[],
): StreamEvent[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): StreamEvent => ({
    data: JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: request.body.model,
      choices,
      ...extra,
    }),
  });
  const delta = (content: Record<string, unknown>, finish: string | null = null) =>
    chunk([{ index: 0, delta: content, finish_reason: finish }]);
  const tokens = reply.tokens ?? 10;
  const usage = { prompt_tokens: tokens - 1, completion_tokens: 1, total_tokens: tokens };
  return [
    delta({ role: 'assistant', content: '' }),
    ...wordsOf(reply.text ?? '').map((content) => delta({ content })),
    // A call's header first (id, name), then its arguments, as OpenAI streams them.
    ...toolCalls.flatMap((call, index) => [
      delta({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      }),
      delta({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }),
    ]),
    delta({}, toolCalls.length ? 'tool_calls' : 'stop'),
    // OpenAI reports usage only when asked to (`stream_options.include_usage`), in a chunk of no choices.
    ...(request.body.stream_options?.include_usage ? [{ ...chunk([], { usage }), tokens }] : []),
    { data: '[DONE]' },
  ];
}

/** Writes `events` as server-sent events, `chunkDelayMs` apart, stopping when the client goes away. */
function writeStream(
  outgoing: ServerResponse,
  received: ReceivedRequest,
  events: StreamEvent[],
  chunkDelayMs: number,
) {
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  outgoing.on('close', () => clearTimeout(timer));
  outgoing.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = () => {
    while (!received.aborted && !outgoing.destroyed) {
      const event = events[next++];
      if (!event) {
        outgoing.end();
        return;
      }
      outgoing.write(`data: ${event.data}\n\n`);
      if (event.tokens !== undefined) received.tokens = event.tokens;
      if (chunkDelayMs > 0) {
        timer = setTimeout(write, chunkDelayMs);
        return;
      }
    }
  };
  write();
}

/** Writes a whole reply as one chat.completion JSON body. */
function writeCompletion(
  outgoing: ServerResponse,
  received: ReceivedRequest,
  reply: Answer,
  id: string,
  toolCalls: WireToolCall[],
) {
  const tokens = reply.tokens ?? 10;
  received.tokens = tokens;
  outgoing.writeHead(200, { 'content-type': 'application/json' });
  outgoing.end(
    JSON.stringify({
      id,
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
}

/**
 * A real local HTTP server that speaks the OpenAI chat-completions protocol, so the model activity runs
 * the real provider library end to end: a request with `stream: true` is answered with server-sent
 * events, as OpenAI does. `respond` decides each reply from the request.
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
        const toolCalls = (reply.toolCalls ?? []).map((call, index): WireToolCall => ({
          id: `call_${calls}_${index}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.input) },
        }));
        const id = `chatcmpl-${calls}`;
        if (received.body.stream)
          writeStream(
            outgoing,
            received,
            streamEvents(received, reply, id, toolCalls),
            reply.chunkDelayMs ?? 0,
          );
        else writeCompletion(outgoing, received, reply, id, toolCalls);
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

/** The worker's model provider for a test server: `openai-compatible` at its URL. */
export const providerFor = (url: string, model = 'test-model') =>
  createModelProvider(
    loadModelConfig({
      AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
      AGENTS_KIT_MODEL: model,
      AGENTS_KIT_MODEL_BASE_URL: url,
    }),
  );

/** A model that interrupts its own turn, then waits on its own thread, then answers (each step once). */
export const selfTargetingModel = (request: ReceivedRequest): Reply => {
  const self = /thread_[0-9a-f]{32}/.exec(systemOf(request))![0];
  const done = toolResultsOf(request).length;
  if (done === 0) return { toolCalls: [{ name: 'interrupt_agent', input: { id: self } }] };
  if (done === 1) return { toolCalls: [{ name: 'wait_agents', input: { ids: [self], timeout_ms: 60_000 } }] };
  return { text: 'answered' };
};
