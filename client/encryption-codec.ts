import type { Payload, PayloadCodec } from '@temporalio/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { CodecKeys, type CodecKey } from './codec-keys';
import { payloadFromBytes, payloadToBytes } from './payload-bytes';

/** The `encoding` metadata of an encrypted payload (the value Temporal's samples use). */
export const encryptedEncoding = 'binary/encrypted';
/** The metadata key that names the key a payload was encrypted with. */
export const keyIdMetadataKey = 'encryption-key-id';

const cipher = 'aes-256-gcm';
const ivBytes = 12;
const tagBytes = 16;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** What {@link createEncryptionCodec} takes. */
export interface EncryptionCodecOptions {
  /** The first key encrypts; every key decrypts, so old histories stay readable after a rotation. */
  keys: readonly CodecKey[];
}

/** Why an encrypted payload cannot be decoded: a Protocol KitError naming the key id. */
function undecodable(message: string, keyId: string | undefined, cause?: unknown): KitError {
  return new KitError(
    ErrorKind.Protocol,
    `cannot decrypt a Temporal payload: ${message}`,
    { keyId },
    { cause },
  );
}

function encrypt(payload: Payload, { id, key }: CodecKey): Payload {
  const iv = randomBytes(ivBytes);
  const encryptor = createCipheriv(cipher, key, iv, { authTagLength: tagBytes });
  const ciphertext = Buffer.concat([encryptor.update(payloadToBytes(payload)), encryptor.final()]);
  return {
    metadata: { encoding: textEncoder.encode(encryptedEncoding), [keyIdMetadataKey]: textEncoder.encode(id) },
    // iv ‖ ciphertext ‖ tag, the layout of Temporal's sample codecs.
    data: Buffer.concat([iv, ciphertext, encryptor.getAuthTag()]),
  };
}

function decrypt(payload: Payload, keys: ReadonlyMap<string, Uint8Array>): Payload {
  const keyIdBytes = payload.metadata?.[keyIdMetadataKey];
  const keyId = keyIdBytes ? textDecoder.decode(keyIdBytes) : undefined;
  if (keyId === undefined) throw undecodable(`it has no ${keyIdMetadataKey} metadata`, keyId);
  const key = keys.get(keyId);
  if (!key) {
    throw undecodable(
      `it was encrypted with key "${keyId}", which is not among this codec's keys (${[...keys.keys()].join(', ')}); add that key to the list (AGENTS_KIT_CODEC_KEYS) to read it`,
      keyId,
    );
  }
  const data = payload.data ?? new Uint8Array(0);
  if (data.length < ivBytes + tagBytes) throw undecodable(`its data is too short for key "${keyId}"`, keyId);
  const decryptor = createDecipheriv(cipher, key, data.subarray(0, ivBytes), { authTagLength: tagBytes });
  decryptor.setAuthTag(data.subarray(data.length - tagBytes));
  let plaintext: Buffer;
  try {
    plaintext = Buffer.concat([
      decryptor.update(data.subarray(ivBytes, data.length - tagBytes)),
      decryptor.final(),
    ]);
  } catch (error) {
    throw undecodable(
      `its authentication tag does not verify with key "${keyId}": the data was altered, or encrypted with another key of that id`,
      keyId,
      error,
    );
  }
  try {
    return payloadFromBytes(plaintext);
  } catch (error) {
    throw undecodable(`decrypted with key "${keyId}", it is not a Temporal payload`, keyId, error);
  }
}

const typeName = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
// ArrayBuffer.isView, not instanceof: a Buffer from another realm (a jest sandbox) is no Uint8Array here.
const isBytes = (value: unknown) => value === undefined || value === null || ArrayBuffer.isView(value);

/** Why `payload` is not a Payload (objects of bytes), or undefined when it is one. */
function payloadProblem(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return ` is ${typeName(payload)}, expected an object`;
  }
  const { metadata, data } = payload as Payload;
  if (!isBytes(data)) return `.data is ${typeName(data)}, expected bytes (a Uint8Array)`;
  if (metadata === undefined || metadata === null) return undefined;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    return `.metadata is ${typeName(metadata)}, expected an object of bytes`;
  }
  const bad = Object.entries(metadata).find(([, value]) => !isBytes(value));
  return bad && `.metadata[${JSON.stringify(bad[0])}] is ${typeName(bad[1])}, expected bytes (a Uint8Array)`;
}

/**
 * `payloads` itself when it is an array of Payloads; a Protocol KitError naming what is wrong
 * otherwise (callers outside TypeScript can pass anything, and a bad field would fail deep in
 * the cipher or the protobuf writer with a TypeError that names neither the payload nor the field).
 */
function payloadList(payloads: unknown, operation: 'encode' | 'decode'): Payload[] {
  if (!Array.isArray(payloads)) {
    throw KitError.protocol(`codec.${operation}: expected an array of payloads, got ${typeName(payloads)}`);
  }
  payloads.forEach((payload, index) => {
    const problem = payloadProblem(payload);
    if (problem) throw KitError.protocol(`codec.${operation}: payloads[${index}]${problem}`);
  });
  return payloads as Payload[];
}

/**
 * A reference to externally stored data (Temporal's experimental external storage) carries only a
 * storage claim; it is left as it is, the stored data being the driver's to protect.
 */
const isReference = (payload: Payload): boolean => (payload.externalPayloads?.length ?? 0) > 0;

const isEncrypted = (payload: Payload): boolean => {
  const encoding = payload.metadata?.encoding;
  return encoding !== undefined && encoding !== null && textDecoder.decode(encoding) === encryptedEncoding;
};

/**
 * A Temporal payload codec that encrypts every payload with AES-256-GCM (a fresh 12-byte IV per
 * payload, 16-byte tag) under the first key and decrypts with whichever key the payload names.
 * Payloads that are not `binary/encrypted` pass decode untouched, so histories written before the
 * codec stay readable. A payload it cannot decrypt (unknown key id, altered data) is a Protocol
 * KitError naming the key id. Give the same codec to every client and worker of a namespace.
 *
 * @example
 * import { Client } from '@temporalio/client';
 * import { createEncryptionCodec, loadCodecKeys } from 'agents-kit';
 * const keys = loadCodecKeys(); // from AGENTS_KIT_CODEC_KEYS
 * const client = new Client({ connection, dataConverter: { payloadCodecs: [createEncryptionCodec({ keys: keys! })] } });
 * // the worker: createAgentWorker({ connection, taskQueue, codec: createEncryptionCodec({ keys: keys! }) })
 */
export function createEncryptionCodec(options: EncryptionCodecOptions): PayloadCodec {
  const keys = parseInput(
    CodecKeys,
    objectInput(options, 'encryption codec options').keys,
    'encryption codec keys',
  );
  const byId: ReadonlyMap<string, Uint8Array> = new Map(keys.map(({ id, key }) => [id, Buffer.from(key)]));
  // Copies, so a caller that reuses its buffers cannot change the keys under a running codec.
  const encryptingKey: CodecKey = { id: keys[0]!.id, key: byId.get(keys[0]!.id)! };
  return {
    encode: async (payloads) =>
      payloadList(payloads, 'encode').map((payload) =>
        isReference(payload) ? payload : encrypt(payload, encryptingKey),
      ),
    decode: async (payloads) =>
      payloadList(payloads, 'decode').map((payload) =>
        isEncrypted(payload) ? decrypt(payload, byId) : payload,
      ),
  };
}

/**
 * The codec of a process without keys: payloads pass both ways untouched, but an encrypted one fails
 * decode with a Protocol KitError saying which key it needs and where keys are configured (instead of
 * the payload converter's "Unknown encoding: binary/encrypted").
 */
export function createKeylessCodec(): PayloadCodec {
  return {
    encode: async (payloads) => payloads,
    decode: async (payloads) => {
      const encrypted = payloads.find(isEncrypted);
      if (!encrypted) return payloads;
      const keyIdBytes = encrypted.metadata?.[keyIdMetadataKey];
      const keyId = keyIdBytes ? textDecoder.decode(keyIdBytes) : undefined;
      throw undecodable(
        `it is encrypted (key "${keyId ?? 'unnamed'}") and this process has no codec keys: set AGENTS_KIT_CODEC_KEYS to the keys of the workers`,
        keyId,
      );
    },
  };
}
