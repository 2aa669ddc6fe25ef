// Sizes and digests of text in plain TypeScript, for workflow code (which may not import node:crypto or
// rely on TextEncoder): UTF-8 sizes for Temporal's payload limits, and SHA-256 (FIPS 180-4) for the root
// run's fixed-size fingerprints of spawn requests, and HMAC-SHA256 for capabilities (domain/capability.ts).

const roundConstants = Uint32Array.from(
  '428a2f98 71374491 b5c0fbcf e9b5dba5 3956c25b 59f111f1 923f82a4 ab1c5ed5 d807aa98 12835b01 243185be 550c7dc3 72be5d74 80deb1fe 9bdc06a7 c19bf174 e49b69c1 efbe4786 0fc19dc6 240ca1cc 2de92c6f 4a7484aa 5cb0a9dc 76f988da 983e5152 a831c66d b00327c8 bf597fc7 c6e00bf3 d5a79147 06ca6351 14292967 27b70a85 2e1b2138 4d2c6dfc 53380d13 650a7354 766a0abb 81c2c92e 92722c85 a2bfe8a1 a81a664b c24b8b70 c76c51a3 d192e819 d6990624 f40e3585 106aa070 19a4c116 1e376c08 2748774c 34b0bcb5 391c0cb3 4ed8aa4a 5b9cca4f 682e6ff3 748f82ee 78a5636f 84c87814 8cc70208 90befffa a4506ceb bef9a3f7 c67178f2'
    .split(' ')
    .map((word) => parseInt(word, 16)),
);

const rotate = (value: number, bits: number) => (value >>> bits) | (value << (32 - bits));

/** UTF-8 bytes of a string (surrogate pairs joined; a lone surrogate becomes U+FFFD, as TextEncoder does). */
export function utf8(text: string): number[] {
  const bytes: number[] = [];
  for (const character of text) {
    let code = character.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    else
      bytes.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 63),
        0x80 | ((code >> 6) & 63),
        0x80 | (code & 63),
      );
  }
  return bytes;
}

/** How many bytes a string takes in UTF-8 (what Temporal's payload limits count), without encoding it. */
export function utf8Length(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) length += 1;
    else if (code < 0x800) length += 2;
    else if (
      code >= 0xd800 &&
      code <= 0xdbff &&
      i + 1 < text.length &&
      (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      length += 4;
      i++;
    } else length += 3;
  }
  return length;
}

/** Bytes of a value's JSON in UTF-8, as a payload carries it. */
export const jsonBytes = (value: unknown): number => utf8Length(JSON.stringify(value));

/**
 * The longest start of `text` that, with `note(charactersCut)` after it, takes at most `maxBytes` as JSON
 * (quotes and escapes included, as a payload carries it); `text` itself when it fits. Never splits a
 * surrogate pair. Clipping a clipped text again to the same size changes nothing.
 */
export function clipJsonBytes(
  text: string,
  maxBytes: number,
  note: (charactersCut: number) => string,
): string {
  if (jsonStringFits(text, maxBytes)) return text;
  const start = (length: number) =>
    length > 0 && (text.charCodeAt(length - 1) & 0xfc00) === 0xd800
      ? text.slice(0, length - 1)
      : text.slice(0, length);
  const clipped = (length: number) => start(length) + note(text.length - start(length).length);
  const fits = (length: number) => jsonBytes(clipped(length)) <= maxBytes;
  // One pass finds a start that fits with the longest note (the most characters cut); then the exact
  // check lengthens it by the few characters a shorter note leaves room for. Linear in the start kept,
  // so clipping a thousand 256 KiB texts takes milliseconds, not seconds, in a workflow task.
  const room = maxBytes - jsonBytes(note(text.length));
  let length = 0;
  for (let used = 0; length < text.length; length++) {
    const cost = jsonCharBytes(text, length);
    if (used + cost > room) break;
    used += cost;
    if (cost === 4) length++; // a surrogate pair: both halves
  }
  if (!fits(length)) {
    // A note that is not monotonic in its count: fall back to the exact search below `length`.
    let low = 0;
    let high = length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (fits(middle)) low = middle;
      else high = middle - 1;
    }
    return clipped(low);
  }
  while (length < text.length && fits(length + 1)) length++;
  return clipped(length);
}

/** Whether `text` as a JSON string takes at most `maxBytes`; reads no further than that. */
function jsonStringFits(text: string, maxBytes: number): boolean {
  let used = 2;
  for (let index = 0; index < text.length && used <= maxBytes; index++) {
    const cost = jsonCharBytes(text, index);
    used += cost;
    if (cost === 4) index++;
  }
  return used <= maxBytes;
}

/** Bytes the character at `index` takes inside a JSON string (4 for a surrogate pair, counted at its first half). */
function jsonCharBytes(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x20) return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if ((code & 0xfc00) === 0xd800 && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) return 4;
  if ((code & 0xf800) === 0xd800) return 6; // a lone surrogate: escaped as \uXXXX
  return 3;
}

/** The SHA-256 digest (FIPS 180-4) of bytes, as 32 bytes. */
export function sha256(input: readonly number[]): number[] {
  const bytes = [...input];
  const bitLength = bytes.length * 8;
  bytes.push(0x80);
  while (bytes.length % 64 !== 56) bytes.push(0);
  for (let shift = 56; shift >= 0; shift -= 8) bytes.push(Math.floor(bitLength / 2 ** shift) & 0xff);
  const hash = Uint32Array.from([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const words = new Uint32Array(64);
  for (let block = 0; block < bytes.length; block += 64) {
    for (let i = 0; i < 16; i++) {
      const at = block + i * 4;
      words[i] = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const w15 = words[i - 15]!;
      const w2 = words[i - 2]!;
      const s0 = rotate(w15, 7) ^ rotate(w15, 18) ^ (w15 >>> 3);
      const s1 = rotate(w2, 17) ^ rotate(w2, 19) ^ (w2 >>> 10);
      words[i] = (words[i - 16]! + s0 + words[i - 7]! + s1) | 0;
    }
    const v = Array.from(hash) as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const [a, b, c, d, e, f, g, h] = v;
      const choose = (e & f) ^ (~e & g);
      const t1 =
        (h + (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) + choose + roundConstants[i]! + words[i]!) | 0;
      const t2 = ((rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      v.splice(0, 8, (t1 + t2) | 0, a, b, c, (d + t1) | 0, e, f, g);
    }
    v.forEach((value, i) => (hash[i] = (hash[i]! + value) | 0));
  }
  return [...hash].flatMap((word) => [word >>> 24, (word >>> 16) & 0xff, (word >>> 8) & 0xff, word & 0xff]);
}

const hex = (bytes: readonly number[]) => bytes.map((byte) => byte.toString(16).padStart(2, '0')).join('');

/** The SHA-256 digest of a string's UTF-8 bytes, as 64 lowercase hex digits. */
export const sha256Hex = (text: string): string => hex(sha256(utf8(text)));

/** HMAC-SHA256 (RFC 2104) of a string's UTF-8 bytes under a key given as hex digits, as 64 hex digits. */
export function hmacSha256Hex(keyHex: string, text: string): string {
  let key = (keyHex.match(/../g) ?? []).map((pair) => parseInt(pair, 16));
  if (key.length > 64) key = sha256(key);
  const padded = [...key, ...new Array<number>(64 - key.length).fill(0)];
  const inner = sha256([...padded.map((byte) => byte ^ 0x36), ...utf8(text)]);
  return hex(sha256([...padded.map((byte) => byte ^ 0x5c), ...inner]));
}

/** A short, non-reversible stand-in for a secret-ish id (the first 16 hex digits of its SHA-256). */
export const fingerprint = (text: string): string => sha256Hex(text).slice(0, 16);

/** JSON with sorted object keys, so equal requests have equal fingerprints whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
