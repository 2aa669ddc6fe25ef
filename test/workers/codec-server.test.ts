import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { createEncryptionCodec } from '../../client/encryption-codec';
import { startCodecServer, type CodecServer } from '../../workers/codec-server';
import { freePort } from '../../workers/dev-server';
import { runCli, startCli, untilOutput } from '../helpers/cli';

const keys = [{ id: 'k1', key: randomBytes(32) }];
const uiOrigin = 'http://127.0.0.1:8233';
let server: CodecServer;

beforeAll(async () => {
  server = await startCodecServer({ port: 0, keys, corsOrigins: [uiOrigin], maxBodyBytes: 64 * 1024 });
});
afterAll(async () => server?.close());

const base64 = (text: string) => Buffer.from(text).toString('base64');
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
interface PayloadJson {
  metadata: Record<string, string>;
  data: string;
}
interface PayloadsJson {
  payloads: PayloadJson[];
}
const fromJson = ({ metadata, data }: PayloadJson): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(metadata).map(([name, value]) => [name, Buffer.from(value, 'base64')]),
  ),
  data: Buffer.from(data, 'base64'),
});
const toJson = ({ metadata, data }: Payload): PayloadJson => ({
  metadata: Object.fromEntries(
    Object.entries(metadata ?? {}).map(([name, value]) => [
      name,
      Buffer.from(value ?? []).toString('base64'),
    ]),
  ),
  data: Buffer.from(data ?? []).toString('base64'),
});

test('/encode then /decode round-trips proto3-JSON payloads, the way the Web UI sends them', async () => {
  const payloads = [
    { metadata: { encoding: base64('json/plain') }, data: base64('{"task":"marker-42"}') },
    { metadata: { encoding: base64('binary/null') } },
  ];
  const encodedResponse = await post('/encode', { payloads });
  expect(encodedResponse.status).toBe(200);
  expect(encodedResponse.headers.get('content-type')).toBe('application/json');
  const encoded = (await encodedResponse.json()) as PayloadsJson;
  expect(encoded.payloads).toHaveLength(2);
  expect(Buffer.from(encoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(encoded.payloads[0]!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
  expect(Buffer.from(encoded.payloads[0]!.data, 'base64').includes('marker-42')).toBe(false);
  // What the server encrypted, the library codec decrypts (and the other way round, below).
  const [viaLibrary] = await createEncryptionCodec({ keys }).decode([fromJson(encoded.payloads[0]!)]);
  expect(defaultPayloadConverter.fromPayload(viaLibrary!)).toEqual({ task: 'marker-42' });

  // The path prefix does not matter (only the last segment does, as the protocol says).
  const decodedResponse = await post('/default/decode', encoded);
  expect(decodedResponse.status).toBe(200);
  expect(await decodedResponse.json()).toEqual({
    payloads: [
      { metadata: { encoding: base64('json/plain') }, data: base64('{"task":"marker-42"}') },
      { metadata: { encoding: base64('binary/null') }, data: '' },
    ],
  });

  const [fromLibrary] = await createEncryptionCodec({ keys }).encode([
    defaultPayloadConverter.toPayload('hi'),
  ]);
  const decodedLibrary = (await (
    await post('/decode', { payloads: [toJson(fromLibrary!)] })
  ).json()) as PayloadsJson;
  expect(Buffer.from(decodedLibrary.payloads[0]!.data, 'base64').toString()).toBe('"hi"');
});

test('CORS: the Web UI origin passes the preflight with credentials; another origin is refused', async () => {
  const preflight = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: {
      origin: uiOrigin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-namespace',
    },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
  expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
  expect(preflight.headers.get('access-control-allow-headers')).toBe(
    'content-type,x-namespace,authorization',
  );
  expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
  expect(preflight.headers.get('access-control-allow-private-network')).toBeNull();
  // A hosted Web UI (a public origin) calling a codec server on localhost: Chrome's Private Network Access.
  const fromPublicPage = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: {
      origin: uiOrigin,
      'access-control-request-method': 'POST',
      'access-control-request-private-network': 'true',
    },
  });
  expect(fromPublicPage.headers.get('access-control-allow-private-network')).toBe('true');

  const answer = await post('/decode', { payloads: [] }, { origin: uiOrigin });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('access-control-allow-origin')).toBe(uiOrigin);

  const stranger = await post('/decode', { payloads: [] }, { origin: 'http://evil.example' });
  expect(stranger.status).toBe(403);
  expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  expect(((await stranger.json()) as { error: string }).error).toMatch(
    /origin http:\/\/evil.example is not allowed/,
  );
});

test('bad requests get 4xx with a reason and the server keeps answering', async () => {
  const badJson = await post('/decode', '{"payloads": [');
  expect(badJson.status).toBe(400);
  expect(((await badJson.json()) as { error: string }).error).toMatch(/^body is not JSON/);

  const badShape = await post('/decode', { payloads: [{ data: 'not base64!' }] });
  expect(badShape.status).toBe(400);
  expect(((await badShape.json()) as { error: string }).error).toMatch(/payloads\.0\.data: expected base64/);

  const otherKey = await createEncryptionCodec({ keys: [{ id: 'gone', key: randomBytes(32) }] }).encode([
    defaultPayloadConverter.toPayload('x'),
  ]);
  const unknownKey = await post('/decode', { payloads: [toJson(otherKey[0]!)] });
  expect(unknownKey.status).toBe(400);
  expect(((await unknownKey.json()) as { error: string }).error).toMatch(/encrypted with key "gone"/);

  expect((await fetch(`${server.url}/decode`)).status).toBe(405);
  expect((await post('/elsewhere', { payloads: [] })).status).toBe(404);
  expect((await post('/decode', { payloads: [] })).status).toBe(200);
});

/** POSTs `size` bytes without a content-length (chunked), or with one, and returns the status. */
function postLarge(size: number, declareLength: boolean): Promise<number> {
  return new Promise((done, fail) => {
    const url = new URL('/decode', server.url);
    const outgoing = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(declareLength ? { 'content-length': String(size) } : {}),
        },
      },
      (response) => {
        response.resume();
        done(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', fail);
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < size) {
        const piece = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += piece.length;
        if (!outgoing.write(piece)) return void outgoing.once('drain', write);
      }
      outgoing.end();
    };
    write();
  });
}

test('a body past the limit is refused with 413, declared or streamed', async () => {
  expect(await postLarge(200 * 1024, true)).toBe(413);
  expect(await postLarge(200 * 1024, false)).toBe(413);
  const tooLarge = await post('/decode', ' '.repeat(65 * 1024));
  expect(tooLarge.status).toBe(413);
  expect((await post('/decode', { payloads: [] })).status).toBe(200);
});

test('agents-kit codec-server: serves with AGENTS_KIT_CODEC_KEYS, prints its URL, stops on SIGTERM', async () => {
  const port = await freePort();
  const keyText = `k1:${keys[0]!.key.toString('base64')}`;
  const cli = startCli(
    ['codec-server', '--port', String(port), '--cors-origin', `${uiOrigin},http://localhost:9000`],
    {
      AGENTS_KIT_CODEC_KEYS: keyText,
    },
  );
  try {
    await untilOutput(cli, /stop with Ctrl-C/);
    expect(cli.output().stdout).toBe(`http://127.0.0.1:${port}\n`);
    expect(cli.output().stderr).toContain('CORS for http://127.0.0.1:8233, http://localhost:9000');
    const [encrypted] = await createEncryptionCodec({ keys }).encode([
      defaultPayloadConverter.toPayload('via cli'),
    ]);
    const answer = await fetch(`http://127.0.0.1:${port}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:9000' },
      body: JSON.stringify({ payloads: [toJson(encrypted!)] }),
    });
    expect(answer.status).toBe(200);
    const decoded = (await answer.json()) as PayloadsJson;
    expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toBe('"via cli"');
  } finally {
    cli.kill('SIGTERM');
  }
  const result = await cli.done;
  expect(result.code).toBe(0);
  expect(result.stderr).toContain('codec server stopped');
});

test('agents-kit codec-server without keys, or with a bad origin, exits 1 with one clear line', async () => {
  const missing = await runCli(['codec-server'], { AGENTS_KIT_CODEC_KEYS: undefined });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/^agents-kit: Protocol: codec-server: AGENTS_KIT_CODEC_KEYS is not set/);
  const badOrigin = await runCli(['codec-server', '--cors-origin', 'http://x/path'], {
    AGENTS_KIT_CODEC_KEYS: `k1:${keys[0]!.key.toString('base64')}`,
  });
  expect(badOrigin.code).toBe(1);
  expect(badOrigin.stderr).toMatch(
    /^agents-kit: Protocol: codec-server: --cors-origin\.0: expected an origin/,
  );
});
