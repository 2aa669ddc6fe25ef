import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { CodecKey } from '../client/codec-keys';
import { createEncryptionCodec } from '../client/encryption-codec';
import { KitError } from '../domain/errors';

/** The origins of a local Web UI (`temporal server start-dev`'s default UI port). */
export const defaultCodecCorsOrigins: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** The largest request body the codec server reads: 4 MiB (a payload is at most 2 MiB in Temporal). */
export const defaultCodecMaxBodyBytes = 4 * 1024 * 1024;

/** What {@link startCodecServer} takes. */
export interface CodecServerOptions {
  /** The port to listen on; 0 picks a free one. Default 8888. */
  port?: number | undefined;
  /** The interface to listen on. Default `127.0.0.1`: whoever reaches the server can decrypt. */
  host?: string | undefined;
  /** The codec's keys: the first encrypts (`/encode`), all decrypt (`/decode`). */
  keys: readonly CodecKey[];
  /** Browser origins allowed to call it (the Web UI's). Default {@link defaultCodecCorsOrigins}. */
  corsOrigins?: readonly string[] | undefined;
  /** Larger request bodies are refused with 413. Default {@link defaultCodecMaxBodyBytes}. */
  maxBodyBytes?: number | undefined;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://<host>:<port>`, the value for the Web UI's codec endpoint (`--ui-codec-endpoint`). */
  url: string;
  port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** A bytes field in proto3 JSON: base64, standard or URL-safe, padding optional. */
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'expected base64');

/** The body of `/encode` and `/decode`: a `temporal.api.common.v1.Payloads` in proto3 JSON. */
const PayloadsJson = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), base64).nullish(),
      data: base64.nullish(),
    }),
  ),
});
type PayloadsJson = z.infer<typeof PayloadsJson>;

const fromJson = ({ payloads }: PayloadsJson): Payload[] =>
  payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(data ?? '', 'base64'),
  }));

const toJson = (payloads: Payload[]): PayloadsJson => ({
  payloads: payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
    data: Buffer.from(data ?? new Uint8Array(0)).toString('base64'),
  })),
});

/** A failed request: the status and the one-line reason sent back as `{ "error": … }`. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The request body, refused with 413 past `limit` bytes (declared or sent). */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `request body larger than ${limit} bytes`);
  if (Number(request.headers['content-length'] ?? 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function parseBody(body: Buffer): Payload[] {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `body is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = PayloadsJson.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join('.') || '(body)';
    throw new HttpError(
      400,
      `body is not {"payloads": [{"metadata": {…}, "data": "…"}]}: ${field}: ${issue?.message}`,
    );
  }
  return fromJson(parsed.data);
}

/** CORS for the allowed origins (the Web UI calls from the browser, with X-Namespace and JSON). */
function corsHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'content-type,x-namespace,authorization',
    'access-control-max-age': '600',
    vary: 'Origin',
  };
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  codec: PayloadCodec,
  origins: ReadonlySet<string>,
  maxBodyBytes: number,
): Promise<void> {
  const origin = request.headers.origin;
  // A browser page of any other origin is refused outright: the server decrypts for whoever asks.
  if (origin !== undefined && !origins.has(origin)) {
    throw new HttpError(403, `origin ${origin} is not allowed (allowed: ${[...origins].join(', ')})`);
  }
  const headers = origin !== undefined ? corsHeaders(origin) : {};
  if (request.method === 'OPTIONS') {
    // Chrome's Private Network Access: a public page (a hosted Web UI) calling a server on localhost.
    const privateNetwork = request.headers['access-control-request-private-network'] === 'true';
    return send(response, 204, undefined, {
      ...headers,
      ...(privateNetwork && origin !== undefined ? { 'access-control-allow-private-network': 'true' } : {}),
    });
  }
  // Only the last path segment counts (the protocol), so the endpoints can sit under any prefix.
  const operation = /\/(encode|decode)$/.exec(new URL(request.url ?? '/', 'http://codec').pathname)?.[1];
  if (!operation) throw new HttpError(404, 'not found: POST /encode or /decode');
  if (request.method !== 'POST') throw new HttpError(405, `${request.method} ${operation}: use POST`);
  const payloads = parseBody(await readBody(request, maxBodyBytes));
  let converted: Payload[];
  try {
    converted = operation === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
  } catch (error) {
    // A payload the keys cannot decrypt is the caller's problem (400, as the protocol says), not ours.
    if (KitError.is(error)) throw new HttpError(400, error.message);
    throw error;
  }
  send(response, 200, toJson(converted), headers);
}

/**
 * Starts a codec server for the Temporal Web UI and CLI (Temporal's remote codec protocol: `POST
 * /encode` and `POST /decode`, a proto3-JSON `{ "payloads": [...] }` each way) with agents-kit's
 * AES-256-GCM codec. CORS lets the given Web UI origins call it from the browser; other browser
 * origins get 403. Bad JSON is a 400, a body past `maxBodyBytes` a 413, a payload the keys cannot
 * decrypt a 400 naming its key id. It has no authentication of its own: keep it on localhost or
 * behind a proxy that authenticates.
 *
 * @example
 * const server = await startCodecServer({ port: 8888, keys: loadCodecKeys()!, corsOrigins: ['http://localhost:8233'] });
 * // temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8888
 * await server.close();
 */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const codec = createEncryptionCodec({ keys: options.keys });
  const origins = new Set(
    (options.corsOrigins ?? defaultCodecCorsOrigins).map((origin) => new URL(origin).origin),
  );
  const maxBodyBytes = options.maxBodyBytes ?? defaultCodecMaxBodyBytes;
  const server = createServer((request, response) => {
    handle(request, response, codec, origins, maxBodyBytes).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError ? error.message : 'internal error of the codec server';
      if (response.headersSent) return void response.destroy();
      const origin = request.headers.origin;
      const cors = origin !== undefined && origins.has(origin) ? corsHeaders(origin) : {};
      // After a refused body the rest of it is not read: close the connection instead of reusing it.
      send(
        response,
        status,
        { error: message },
        { ...cors, ...(status === 413 ? { connection: 'close' } : {}) },
      );
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((listening, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 8888, host, () => {
      server.off('error', fail);
      listening();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}
