import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { loadCodecKeys, type CodecKey } from '../../client/codec-keys';
import { createEncryptionCodec, createKeylessCodec } from '../../client/encryption-codec';
import { payloadFromBytes, payloadToBytes } from '../../client/payload-bytes';
import { KitError } from '../../domain/errors';

const key = (id: string): CodecKey => ({ id, key: randomBytes(32) });
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

async function errorOf(promise: Promise<unknown>): Promise<KitError> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof KitError)) throw new Error(`expected a KitError, got ${String(error)}`);
  return error;
}

describe('createEncryptionCodec', () => {
  const current = key('2025-06');
  const codec = createEncryptionCodec({ keys: [current] });

  test('round trip: decode(encode(payloads)) gives back each payload, metadata and data', async () => {
    const payloads = [plain({ task: 'plan', capability: 'cap_secret' }), plain('x'), plain(null)];
    const encoded = await codec.encode(payloads);
    expect(encoded).toHaveLength(3);
    for (const payload of encoded) {
      expect(text(payload.metadata?.encoding)).toBe('binary/encrypted');
      expect(text(payload.metadata?.['encryption-key-id'])).toBe('2025-06');
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([
      { task: 'plan', capability: 'cap_secret' },
      'x',
      null,
    ]);
    expect(text(decoded[0]!.metadata?.encoding)).toBe('json/plain');
  });

  test('every payload gets its own IV: the same payload twice encrypts to different data', async () => {
    const [first, second] = await codec.encode([plain('same'), plain('same')]);
    expect(Buffer.from(first!.data!).subarray(0, 12)).not.toEqual(Buffer.from(second!.data!).subarray(0, 12));
    expect(Buffer.from(first!.data!)).not.toEqual(Buffer.from(second!.data!));
    // 12-byte IV + ciphertext + 16-byte tag
    expect(first!.data!.length).toBe(12 + payloadToBytes(plain('same')).length + 16);
  });

  test('the ciphertext holds neither the plaintext nor the original metadata', async () => {
    const secret = 'cap_0123456789abcdef-very-secret';
    const [encoded] = await codec.encode([plain({ secret })]);
    const everything = Buffer.concat([encoded!.data!, ...Object.values(encoded!.metadata ?? {})]);
    expect(everything.includes(secret)).toBe(false);
    expect(everything.includes('json/plain')).toBe(false);
  });

  test('key rotation: what the old key encrypted decodes with [new, old]; new payloads use the new key', async () => {
    const old = key('old');
    const next = key('new');
    const [before] = await createEncryptionCodec({ keys: [old] }).encode([
      plain('written before the rotation'),
    ]);
    const rotated = createEncryptionCodec({ keys: [next, old] });
    const [after] = await rotated.encode([plain('written after')]);
    expect(text(after!.metadata?.['encryption-key-id'])).toBe('new');
    const decoded = await rotated.decode([before!, after!]);
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([
      'written before the rotation',
      'written after',
    ]);
  });

  test('a payload of an unknown key id fails with a Protocol error naming that id', async () => {
    const [encoded] = await createEncryptionCodec({ keys: [key('retired')] }).encode([plain('x')]);
    const error = await errorOf(codec.decode([encoded!]));
    expect(error.kind).toBe('Protocol');
    expect(error.message).toMatch(
      /encrypted with key "retired", which is not among this codec's keys \(2025-06\)/,
    );
  });

  test('altered data, or another key under the same id, fails the tag check naming the key id', async () => {
    const [encoded] = await codec.encode([plain('do not touch')]);
    const data = Buffer.from(encoded!.data!);
    data[20] = data[20]! ^ 0x01;
    const altered = await errorOf(codec.decode([{ ...encoded!, data }]));
    expect(altered.kind).toBe('Protocol');
    expect(altered.message).toMatch(/authentication tag does not verify with key "2025-06"/);
    const impostor = createEncryptionCodec({ keys: [key('2025-06')] });
    expect((await errorOf(impostor.decode([encoded!]))).message).toMatch(
      /does not verify with key "2025-06"/,
    );
    const truncated = await errorOf(codec.decode([{ ...encoded!, data: data.subarray(0, 10) }]));
    expect(truncated.message).toMatch(/too short for key "2025-06"/);
  });

  test('decode leaves payloads that are not binary/encrypted as they are (histories from before the codec)', async () => {
    const payloads = [
      plain({ old: true }),
      plain(undefined),
      { metadata: { encoding: Buffer.from('binary/plain') } },
    ];
    expect(await codec.decode(payloads)).toEqual(payloads);
  });

  test('a metadata key named __proto__ survives the round trip as a key (a CI run of the property found it)', async () => {
    const metadata = JSON.parse('{"__proto__": 1}') as Record<string, unknown>;
    metadata['__proto__'] = Buffer.from('x');
    const [decoded] = await codec.decode(
      await codec.encode([{ metadata: metadata as never, data: Buffer.from('d') }]),
    );
    expect(Object.keys(decoded!.metadata ?? {})).toEqual(['__proto__']);
    expect(
      Buffer.from(Object.getOwnPropertyDescriptor(decoded!.metadata, '__proto__')!.value).toString(),
    ).toBe('x');
  });

  test('bad keys are refused when the codec is made', () => {
    expect(() => createEncryptionCodec({ keys: [] })).toThrow(/at least one key/);
    expect(() => createEncryptionCodec({ keys: [{ id: 'short', key: randomBytes(16) }] })).toThrow(
      /expected 32 bytes, got 16/,
    );
    expect(() => createEncryptionCodec({ keys: [key('a'), key('a')] })).toThrow(/duplicate id "a"/);
    expect(() => createEncryptionCodec({ keys: [key('no spaces')] })).toThrow(KitError);
  });

  test.each([
    ['not an array', 'payload' as unknown, /^codec\.(en|de)code: expected an array of payloads, got string$/],
    ['undefined', undefined, /expected an array of payloads, got undefined$/],
    [
      'an array holding null',
      [plain('ok'), null],
      /^codec\.(en|de)code: payloads\[1\] is null, expected an object$/,
    ],
    ['data that is not bytes', [{ data: 'text' }], /payloads\[0\]\.data is string, expected bytes/],
    [
      'metadata that is not bytes',
      [{ metadata: { encoding: 5 } }],
      /payloads\[0\]\.metadata\["encoding"\] is number/,
    ],
  ])('encode and decode of %s fail with a Protocol error naming it', async (_case, payloads, message) => {
    for (const operation of [codec.encode, codec.decode]) {
      const error = await errorOf(operation(payloads as Payload[]));
      expect(error.kind).toBe('Protocol');
      expect(error.message).toMatch(message);
    }
  });

  test('property: any payload round-trips, and its bytes are what @temporalio/proto writes', async () => {
    const payload = fc.record({
      metadata: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.uint8Array({ maxLength: 40 })),
      data: fc.uint8Array({ maxLength: 300 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(payload, { maxLength: 4 }), async (payloads) => {
        const decoded = await codec.decode(await codec.encode(payloads));
        expect(decoded.map(normalise)).toEqual(payloads.map(normalise));
        for (const original of payloads) {
          const ours = Buffer.from(payloadToBytes(original));
          const theirs = temporal.api.common.v1.Payload.decode(ours);
          expect(normalise(theirs)).toEqual(normalise(original));
          expect(
            normalise(payloadFromBytes(temporal.api.common.v1.Payload.encode(original).finish())),
          ).toEqual(normalise(original));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('createKeylessCodec', () => {
  test('passes plain payloads both ways; an encrypted one fails decode saying to set the keys', async () => {
    const keyless = createKeylessCodec();
    const payloads = [plain({ a: 1 }), plain('b')];
    expect(await keyless.encode(payloads)).toEqual(payloads);
    expect(await keyless.decode(payloads)).toEqual(payloads);
    const encrypted = await createEncryptionCodec({ keys: [key('prod-1')] }).encode(payloads);
    const error = await errorOf(keyless.decode([payloads[0]!, encrypted[1]!]));
    expect(error.kind).toBe('Protocol');
    expect(error.message).toMatch(
      /encrypted \(key "prod-1"\) and this process has no codec keys: set AGENTS_KIT_CODEC_KEYS/,
    );
  });
});

/** Plain arrays, so payloads compare by content whatever Uint8Array subclass holds them. */
function normalise(payload: Payload) {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, [...(value ?? [])]]),
    ),
    data: [...(payload.data ?? [])],
  };
}

describe('loadCodecKeys', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  test('reads id:base64key pairs, first one first; unset or empty is undefined', () => {
    const keys = loadCodecKeys({
      AGENTS_KIT_CODEC_KEYS: ` new:${k1.toString('base64')} , old:${k2.toString('base64')}`,
    });
    expect(keys?.map(({ id }) => id)).toEqual(['new', 'old']);
    expect(Buffer.from(keys![0]!.key)).toEqual(k1);
    expect(Buffer.from(keys![1]!.key)).toEqual(k2);
    expect(loadCodecKeys({})).toBeUndefined();
    expect(loadCodecKeys({ AGENTS_KIT_CODEC_KEYS: '' })).toBeUndefined();
  });

  test.each([
    ['nocolon', /^AGENTS_KIT_CODEC_KEYS: entry 1: expected id:base64key$/],
    [
      `a:${k1.toString('base64')},b:${randomBytes(16).toString('base64')}`,
      /entry 2 \(id "b"\): the key must decode to exactly 32 bytes, got 16/,
    ],
    ['bad id!:AAAA', /^AGENTS_KIT_CODEC_KEYS: entry 1: the id expected 1-64 characters/],
    [`${'x'.repeat(65)}:${k1.toString('base64')}`, /entry 1: the id expected 1-64 characters/],
    ['a:not*base64', /entry 1 \(id "a"\): the key is not base64/],
    [`a:${k1.toString('base64')},`, /entry 2: expected id:base64key/],
    [
      `a:${k1.toString('base64')},a:${k2.toString('base64')}`,
      /^AGENTS_KIT_CODEC_KEYS: entry 2: duplicate id "a"$/,
    ],
  ])('%s is a Protocol error naming the variable and the entry', (value, message) => {
    let thrown: unknown;
    try {
      loadCodecKeys({ AGENTS_KIT_CODEC_KEYS: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(KitError);
    expect((thrown as KitError).kind).toBe('Protocol');
    expect((thrown as KitError).message).toMatch(message);
    // Key material never appears in the message.
    expect((thrown as KitError).message).not.toContain(k1.toString('base64'));
  });
});
