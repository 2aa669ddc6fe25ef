import { z } from 'zod';
import { ErrorKind, KitError, objectInput } from '../domain/errors';

/** The environment variable that holds the payload codec's keys. */
export const codecKeysVariable = 'AGENTS_KIT_CODEC_KEYS';

/** A key's name, stored beside every payload it encrypts so decode can pick the key. */
export const CodecKeyId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'expected 1-64 characters of A-Z, a-z, 0-9, . _ -');

/** An AES-256 key: exactly 32 bytes. */
const keyBytes = z
  // Not instanceof alone: a Buffer made in another realm (a jest sandbox, a vm context) is not an
  // instance of this realm's Uint8Array.
  .custom<Uint8Array>((value) => Buffer.isBuffer(value) || value instanceof Uint8Array, {
    error: 'expected the key as a Buffer or Uint8Array',
  })
  .superRefine((key, context) => {
    if (key.length !== 32)
      context.addIssue({ code: 'custom', message: `expected 32 bytes, got ${key.length}` });
  });

/** One key of the encryption codec: its id and 32 bytes of AES-256 key material. */
export const CodecKey = z.object({ id: CodecKeyId, key: keyBytes });
export type CodecKey = z.infer<typeof CodecKey>;

/** The key list: the first encrypts, every one decrypts (rotation); ids are unique. */
export const CodecKeys = z
  .array(CodecKey)
  .min(1, 'expected at least one key')
  .superRefine((keys, context) => {
    const seen = new Set<string>();
    keys.forEach(({ id }, index) => {
      if (seen.has(id))
        context.addIssue({ code: 'custom', path: [index, 'id'], message: `duplicate id "${id}"` });
      seen.add(id);
    });
  });

/** Standard base64 (padding optional), what `openssl rand -base64 32` prints. */
const base64Key = z
  .string()
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'the key is not base64')
  .transform((text) => Buffer.from(text, 'base64'))
  .superRefine((key, context) => {
    if (key.length === 32) return;
    context.addIssue({
      code: 'custom',
      message: `the key must decode to exactly 32 bytes, got ${key.length} (make one with: openssl rand -base64 32)`,
    });
  });

/** Why one `id:base64key` entry is not a key, without repeating any key material. */
function parseEntry(entry: string, position: number): CodecKey {
  const where = `${codecKeysVariable}: entry ${position}`;
  const colon = entry.indexOf(':');
  if (colon < 0) throw KitError.protocol(`${where}: expected id:base64key`, { fields: [codecKeysVariable] });
  const id = CodecKeyId.safeParse(entry.slice(0, colon).trim());
  if (!id.success) {
    throw KitError.protocol(`${where}: the id ${id.error.issues[0]?.message ?? 'is invalid'}`, {
      fields: [codecKeysVariable],
    });
  }
  const key = base64Key.safeParse(entry.slice(colon + 1).trim());
  if (!key.success) {
    throw KitError.protocol(`${where} (id "${id.data}"): ${key.error.issues[0]?.message ?? 'invalid key'}`, {
      fields: [codecKeysVariable],
    });
  }
  return { id: id.data, key: key.data };
}

/**
 * The codec keys configured in `AGENTS_KIT_CODEC_KEYS`: a comma-separated list of `id:base64key`
 * (32-byte keys, e.g. from `openssl rand -base64 32`); the first encrypts, all decrypt. Returns
 * undefined when the variable is unset or empty. A malformed list is a Protocol KitError naming the
 * variable and the entry (by position and id, never echoing key material).
 *
 * @example
 * // AGENTS_KIT_CODEC_KEYS="2025-06:q3...=,2025-01:Zm9v...="
 * const keys = loadCodecKeys();
 * const client = new Client({ connection, dataConverter: keys ? { payloadCodecs: [createEncryptionCodec({ keys })] } : {} });
 */
export function loadCodecKeys(
  environment: { readonly AGENTS_KIT_CODEC_KEYS?: string | undefined } = process.env,
): CodecKey[] | undefined {
  const raw = objectInput(environment, 'environment').AGENTS_KIT_CODEC_KEYS;
  if (raw !== undefined && typeof raw !== 'string')
    throw new KitError(ErrorKind.Protocol, `${codecKeysVariable}: expected a string`, {
      fields: [codecKeysVariable],
    });
  const text = raw?.trim();
  if (!text) return undefined;
  const keys = text.split(',').map((entry, index) => parseEntry(entry.trim(), index + 1));
  const checked = CodecKeys.safeParse(keys);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const position = typeof issue?.path[0] === 'number' ? ` entry ${issue.path[0] + 1}` : '';
    throw new KitError(
      ErrorKind.Protocol,
      `${codecKeysVariable}:${position}: ${issue?.message ?? 'invalid'}`,
      {
        fields: [codecKeysVariable],
      },
    );
  }
  return checked.data;
}
