import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { KitError } from '../../domain/errors';
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

const emptyPayloads = (count: number) => `{"payloads":[${Array(count).fill('{}').join(',')}]}`;
const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error;

test('more payloads than the limit (10,000 by default) are refused with 413 naming the limit', async () => {
  const tooMany = await post('/encode', emptyPayloads(10_001));
  expect(tooMany.status).toBe(413);
  expect(await errorOf(tooMany)).toBe(
    'too many payloads: a request may carry at most 10000 (this one has 10001); send them in smaller requests',
  );
  // A body of more objects than 10,000 payloads can hold is refused without parsing it.
  const farTooMany = await post('/decode', emptyPayloads(21_000));
  expect(farTooMany.status).toBe(413);
  expect(await errorOf(farTooMany)).toMatch(/at most 10000 \(this one holds 21001 JSON objects\)/);

  const limited = await startCodecServer({ port: 0, keys, maxPayloads: 3 });
  try {
    const atLimit = await fetch(`${limited.url}/encode`, { method: 'POST', body: emptyPayloads(3) });
    expect(((await atLimit.json()) as PayloadsJson).payloads).toHaveLength(3);
    const past = await fetch(`${limited.url}/encode`, { method: 'POST', body: emptyPayloads(4) });
    expect(past.status).toBe(413);
    expect(await errorOf(past)).toMatch(/at most 3 \(this one has 4\)/);
  } finally {
    await limited.close();
  }
});

test('a response past four times the body limit is refused with 413, not built', async () => {
  // 3,000 empty payloads are a 9 kB body, but each encrypted one is ~130 bytes of response.
  const encoded = await post('/encode', emptyPayloads(3_000));
  expect(encoded.status).toBe(413);
  expect(await errorOf(encoded)).toBe(
    `the response would be larger than ${4 * 64 * 1024} bytes; send fewer payloads per request`,
  );
  expect((await post('/encode', emptyPayloads(200))).status).toBe(200);
});

test('a small request is answered while a large one is converted', async () => {
  const roomy = await startCodecServer({ port: 0, keys });
  try {
    // 10,000 empty payloads: a 30 kB body the server has read at once, then 40 slices of encryption.
    // The small request arrives after the body: before slicing, it waited for all 10,000 payloads.
    const body = emptyPayloads(10_000);
    const finished: string[] = [];
    let uploaded!: () => void;
    const bodySent = new Promise<void>((sent) => (uploaded = sent));
    const large = new Promise<PayloadsJson>((done, fail) => {
      const outgoing = request(`${roomy.url}/encode`, { method: 'POST' }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          finished.push('large');
          done(JSON.parse(text) as PayloadsJson);
        });
      });
      outgoing.on('error', fail);
      outgoing.end(body, uploaded);
    });
    await bodySent;
    const small = await fetch(`${roomy.url}/encode`, {
      method: 'POST',
      body: JSON.stringify({ payloads: [{ metadata: { encoding: base64('json/plain') }, data: 'e30=' }] }),
    });
    finished.push('small');
    expect(small.status).toBe(200);
    expect((await large).payloads).toHaveLength(10_000);
    expect(finished).toEqual(['small', 'large']);
  } finally {
    await roomy.close();
  }
});

test('a request target that is not a URL is a 400 (absolute form)', async () => {
  const answer = await new Promise<string>((done, fail) => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('end', () => done(text));
    socket.on('error', fail);
    socket.end(
      'POST http://[oops/decode HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}',
    );
  });
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  expect(answer).toContain('the request target \\"http://[oops/decode\\" is not a URL');
});

test.each([
  ['no options', undefined, /^invalid codec server options: missing$/],
  ['a port that is no number', { port: 'abc' }, /^invalid codec server options: port: .*expected number/],
  ['a negative port', { port: -1 }, /port: Too small/],
  ['a port past 65535', { port: 70_000 }, /port: Too big/],
  ['a NaN port', { port: NaN }, /port: .*received NaN/],
  ['a NaN body limit', { maxBodyBytes: NaN }, /maxBodyBytes: .*received NaN/],
  ['a payload limit of 0', { maxPayloads: 0 }, /maxPayloads: Too small/],
  ['origins as one string', { corsOrigins: uiOrigin }, /corsOrigins: .*expected array/],
  ['an origin that is no URL', { corsOrigins: ['localhost'] }, /corsOrigins\.0: expected an origin/],
  ['an empty host', { host: '' }, /host: Too small/],
  [
    'a host that does not resolve',
    { host: 'no-such-host.invalid' },
    /cannot listen on host "no-such-host\.invalid"/,
  ],
  ['a host not of this machine', { host: '192.0.2.1' }, /cannot listen on host "192\.0\.2\.1"/],
])('startCodecServer refuses %s with a Protocol KitError naming it', async (_case, options, message) => {
  const started = startCodecServer(
    options === undefined ? (undefined as never) : ({ keys, port: 0, ...options } as never),
  );
  const error = await started.then(
    async (running) => {
      await running.close();
      return undefined;
    },
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(KitError);
  expect((error as KitError).kind).toBe('Protocol');
  expect((error as KitError).message).toMatch(message);
});

test('a port in use is a Conflict naming the port', async () => {
  await expect(startCodecServer({ port: server.port, keys })).rejects.toMatchObject({
    kind: 'Conflict',
    message: `codec server: port ${server.port} on 127.0.0.1 is already in use; pick another port (0: any free one)`,
  });
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

test('agents-kit codec-server without keys, or with a bad origin or host, exits 1 with one clear line', async () => {
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
  const badHost = await runCli(['codec-server', '--host', '192.0.2.1'], {
    AGENTS_KIT_CODEC_KEYS: `k1:${keys[0]!.key.toString('base64')}`,
  });
  expect(badHost.code).toBe(1);
  expect(badHost.stderr).toMatch(/^agents-kit: Protocol: codec server: cannot listen on host "192\.0\.2\.1"/);
});
