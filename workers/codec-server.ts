import type { Payload, PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { z } from 'zod';
import type { CodecKey } from '../client/codec-keys';
import { createEncryptionCodec } from '../client/encryption-codec';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';

/** The origins of a local Web UI (`temporal server start-dev`'s default UI port). */
export const defaultCodecCorsOrigins: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** The largest request body the codec server reads: 4 MiB (a payload is at most 2 MiB in Temporal). */
export const defaultCodecMaxBodyBytes = 4 * 1024 * 1024;

/**
 * The most payloads one request may carry: 10,000. The Web UI sends a handful per request, Temporal's
 * CLI at most a page of history's; the limit keeps a small body of many empty payloads (each costing a
 * cipher and ~130 bytes of response, ~35 µs) from tying up the server: 10,000 take about 0.3 s.
 */
export const defaultCodecMaxPayloads = 10_000;

/**
 * Payloads converted between two turns of the event loop (under 10 ms of work), so a small
 * request, and the server's timeouts, are served while a large one is converted.
 */
const payloadsPerSlice = 256;

/**
 * Requests converted at once; later ones wait (holding only their body) until one is done. Slices
 * already interleave the running ones, so more would add memory without serving anyone sooner.
 */
const concurrentConversions = 4;

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
  /**
   * Larger request bodies are refused with 413, and responses past four times this size too.
   * Default {@link defaultCodecMaxBodyBytes}.
   */
  maxBodyBytes?: number | undefined;
  /** Requests with more payloads are refused with 413. Default {@link defaultCodecMaxPayloads}. */
  maxPayloads?: number | undefined;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://<host>:<port>`, the value for the Web UI's codec endpoint (`--ui-codec-endpoint`). */
  url: string;
  port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** An origin as a browser sends it (http(s), host, optional port, nothing after), normalised. */
export const CodecOrigin = z
  .string()
  .refine((text) => {
    const url = URL.canParse(text) ? new URL(text) : undefined;
    return (
      url !== undefined &&
      ['http:', 'https:'].includes(url.protocol) &&
      url.pathname === '/' &&
      !url.search &&
      !url.hash &&
      !url.username
    );
  }, 'expected an origin like http://localhost:8233 (scheme, host and optional port, nothing after)')
  .transform((text) => new URL(text).origin);

const positiveInt = z.int().positive();

/** The options other than the keys, which the codec checks itself. */
const ServerOptions = z.object({
  port: z.int().min(0).max(65_535).default(8888),
  host: z.string().min(1).default('127.0.0.1'),
  corsOrigins: z
    .array(CodecOrigin)
    .default([...defaultCodecCorsOrigins])
    .transform((origins) => new Set(origins)),
  maxBodyBytes: positiveInt.default(defaultCodecMaxBodyBytes),
  maxPayloads: positiveInt.default(defaultCodecMaxPayloads),
});
type ServerOptions = z.infer<typeof ServerOptions>;

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
type PayloadJson = PayloadsJson['payloads'][number];

const fromJson = ({ metadata, data }: PayloadJson): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
  ),
  data: Buffer.from(data ?? '', 'base64'),
});

const toJson = ({ metadata, data }: Payload): PayloadJson => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  ),
  data: Buffer.from(data ?? new Uint8Array(0)).toString('base64'),
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

const tooManyPayloads = (limit: number, found: string) =>
  new HttpError(
    413,
    `too many payloads: a request may carry at most ${limit} (this one ${found}); send them in smaller requests`,
  );

/**
 * The JSON objects in `body` (`{` outside strings). A body of `limit` payloads has at most
 * 2 × `limit` + 1 (each payload and its metadata, and the body), so more are refused before parsing:
 * parsing a 4 MiB body of a million `{}` takes most of a second and over 100 MB.
 */
function countObjects(body: Buffer): number {
  let objects = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    // A backslash in a string escapes the next byte (\" does not end the string).
    if (inString) {
      if (byte === 0x5c) index++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b) objects++;
  }
  return objects;
}

function parseBody(body: Buffer, maxPayloads: number): PayloadJson[] {
  const objects = countObjects(body);
  if (objects > 2 * maxPayloads + 1) throw tooManyPayloads(maxPayloads, `holds ${objects} JSON objects`);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new HttpError(400, `body is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Counted before the schema check, which would otherwise look at every one of them first.
  const listed = (json as { payloads?: unknown } | null)?.payloads;
  if (Array.isArray(listed) && listed.length > maxPayloads) {
    throw tooManyPayloads(maxPayloads, `has ${listed.length}`);
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
  return parsed.data.payloads;
}

/**
 * Encodes or decodes the payloads slice by slice, yielding to the event loop between slices, and
 * returns the response body. Its size is checked as it grows: decode can turn a byte of an encrypted
 * metadata key into six (`\u0001`), so the body limit alone does not bound it.
 */
async function convert(
  operation: 'encode' | 'decode',
  payloads: PayloadJson[],
  codec: PayloadCodec,
  maxResponseBytes: number,
): Promise<string> {
  const pieces: string[] = [];
  let size = 0;
  for (let start = 0; start < payloads.length; start += payloadsPerSlice) {
    if (start > 0) await yieldToEventLoop();
    const slice = payloads.slice(start, start + payloadsPerSlice).map(fromJson);
    let converted: Payload[];
    try {
      converted = operation === 'encode' ? await codec.encode(slice) : await codec.decode(slice);
    } catch (error) {
      // A payload the keys cannot decrypt is the caller's problem (400, as the protocol says), not ours.
      if (KitError.is(error)) throw new HttpError(400, error.message);
      throw error;
    }
    const piece = converted.map((payload) => JSON.stringify(toJson(payload))).join(',');
    size += Buffer.byteLength(piece) + 1;
    if (size > maxResponseBytes) {
      throw new HttpError(
        413,
        `the response would be larger than ${maxResponseBytes} bytes; send fewer payloads per request`,
      );
    }
    pieces.push(piece);
  }
  return `{"payloads":[${pieces.join(',')}]}`;
}

/** Runs at most `limit` tasks at once; the others wait in the order they came. */
function concurrencyLimit(limit: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <Result>(task: () => Promise<Result>): Promise<Result> => {
    if (running < limit) running++;
    else await new Promise<void>((start) => waiting.push(start));
    try {
      return await task();
    } finally {
      // Hand the place to the next in line, or free it.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
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

/** Sends `text` (JSON, or nothing when empty). */
function send(response: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  response.writeHead(status, {
    ...headers,
    ...(text ? { 'content-type': 'application/json' } : {}),
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

/** What every request of one server shares. */
type Handler = { codec: PayloadCodec; options: ServerOptions; inTurn: ReturnType<typeof concurrencyLimit> };

async function handle(request: IncomingMessage, response: ServerResponse, handler: Handler): Promise<void> {
  const { codec, options, inTurn } = handler;
  const origins = options.corsOrigins;
  const origin = request.headers.origin;
  // A browser page of any other origin is refused outright: the server decrypts for whoever asks.
  if (origin !== undefined && !origins.has(origin)) {
    throw new HttpError(403, `origin ${origin} is not allowed (allowed: ${[...origins].join(', ')})`);
  }
  const headers = origin !== undefined ? corsHeaders(origin) : {};
  if (request.method === 'OPTIONS') {
    // Chrome's Private Network Access: a public page (a hosted Web UI) calling a server on localhost.
    const privateNetwork = request.headers['access-control-request-private-network'] === 'true';
    return send(response, 204, '', {
      ...headers,
      ...(privateNetwork && origin !== undefined ? { 'access-control-allow-private-network': 'true' } : {}),
    });
  }
  // An absolute-form target (`POST http://host/decode`) may be no URL at all.
  const target = request.url ?? '/';
  if (!URL.canParse(target, 'http://codec')) {
    throw new HttpError(400, `the request target ${JSON.stringify(target.slice(0, 200))} is not a URL`);
  }
  // Only the last path segment counts (the protocol), so the endpoints can sit under any prefix.
  const operation = /\/(encode|decode)$/.exec(new URL(target, 'http://codec').pathname)?.[1];
  if (operation !== 'encode' && operation !== 'decode') {
    throw new HttpError(404, 'not found: POST /encode or /decode');
  }
  if (request.method !== 'POST') throw new HttpError(405, `${request.method} ${operation}: use POST`);
  // The body is read before waiting for a turn, so a slow upload does not hold one.
  const body = await readBody(request, options.maxBodyBytes);
  // Responses may be four times the body limit: room for encode's ~130 bytes per (even empty)
  // payload, and no room for decode's worst blow-up (see convert).
  const text = await inTurn(() =>
    convert(operation, parseBody(body, options.maxPayloads), codec, 4 * options.maxBodyBytes),
  );
  send(response, 200, text, headers);
}

/** Why the server could not listen, as a KitError naming the option to change. */
function listenError(error: unknown, { host, port }: ServerOptions): KitError {
  const inUse = (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
  const reason = error instanceof Error ? error.message : String(error);
  const message = inUse
    ? `port ${port} on ${host} is already in use; pick another port (0: any free one)`
    : `cannot listen on host "${host}" (${reason}); give an address or name of this machine, e.g. 127.0.0.1`;
  const kind = inUse ? ErrorKind.Conflict : ErrorKind.Protocol;
  return new KitError(
    kind,
    `codec server: ${message}`,
    { fields: [inUse ? 'port' : 'host'] },
    { cause: error },
  );
}

/**
 * Starts a codec server for the Temporal Web UI and CLI (Temporal's remote codec protocol: `POST
 * /encode` and `POST /decode`, a proto3-JSON `{ "payloads": [...] }` each way) with agents-kit's
 * AES-256-GCM codec. CORS lets the given Web UI origins call it from the browser; other browser
 * origins get 403. Bad JSON is a 400, a body past `maxBodyBytes` or more than `maxPayloads` payloads a
 * 413, a payload the keys cannot decrypt a 400 naming its key id. Large requests are converted in
 * slices, a few at a time, so small ones are answered meanwhile. Bad options are a Protocol KitError
 * naming the option, before anything listens. It has no authentication of its own: keep it on
 * localhost or behind a proxy that authenticates.
 *
 * @example
 * const server = await startCodecServer({ port: 8888, keys: loadCodecKeys()!, corsOrigins: ['http://localhost:8233'] });
 * // temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8888
 * await server.close();
 */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const { keys, ...rest } = objectInput(options, 'codec server options');
  const checked = parseInput(ServerOptions, rest, 'codec server options');
  const codec = createEncryptionCodec({ keys });
  const origins = checked.corsOrigins;
  const handler = { codec, options: checked, inTurn: concurrencyLimit(concurrentConversions) };
  const server = createServer((request, response) => {
    handle(request, response, handler).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError ? error.message : 'internal error of the codec server';
      if (response.headersSent) return void response.destroy();
      const origin = request.headers.origin;
      const cors = origin !== undefined && origins.has(origin) ? corsHeaders(origin) : {};
      // After a refused body the rest of it is not read: close the connection instead of reusing it.
      send(response, status, JSON.stringify({ error: message }), {
        ...cors,
        ...(status === 413 ? { connection: 'close' } : {}),
      });
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  const { host } = checked;
  try {
    await new Promise<void>((listening, fail) => {
      server.once('error', fail);
      server.listen(checked.port, host, () => {
        server.off('error', fail);
        listening();
      });
    });
  } catch (error) {
    throw listenError(error, checked);
  }
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
