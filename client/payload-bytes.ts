import type { Payload } from '@temporalio/common';

// A Payload in protobuf's binary wire format (temporal.api.common.v1.Payload: map<string, bytes>
// metadata = 1, bytes data = 2), the bytes Temporal's sample encryption codecs encrypt. Field 3
// (external_payloads) marks a reference to externally stored data, which the codec leaves as it is. Written by hand because @temporalio/proto is not a
// dependency of agents-kit (only of the SDK), and loading it costs a CLI ~0.2 s.

const wireType = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

/** Grows as bytes are written; `bytes()` is what was written. */
class Writer {
  private chunks: Uint8Array[] = [];

  varint(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a protobuf varint: ${value}`);
    const bytes: number[] = [];
    let rest = value;
    while (rest >= 0x80) {
      bytes.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    bytes.push(rest);
    this.chunks.push(Uint8Array.from(bytes));
    return this;
  }

  tag(field: number, type: number): this {
    return this.varint(field * 8 + type);
  }

  lengthDelimited(field: number, bytes: Uint8Array): this {
    this.tag(field, wireType.lengthDelimited).varint(bytes.length);
    this.chunks.push(bytes);
    return this;
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.chunks);
  }
}

/** Reads fields off a buffer; throws a RangeError on anything that is not well-formed protobuf. */
class Reader {
  private offset = 0;

  constructor(private readonly buffer: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.buffer.length;
  }

  varint(): number {
    let value = 0;
    for (let shift = 1, read = 0; read < 10; read++, shift *= 0x80) {
      const byte = this.buffer[this.offset++];
      if (byte === undefined) throw new RangeError('truncated varint');
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) {
        if (!Number.isSafeInteger(value)) throw new RangeError('varint beyond 2^53');
        return value;
      }
    }
    throw new RangeError('varint longer than 10 bytes');
  }

  take(length: number): Uint8Array {
    if (this.offset + length > this.buffer.length) throw new RangeError('truncated field');
    const bytes = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return bytes;
  }

  /** The next field's number and wire type. */
  tag(): { field: number; type: number } {
    const tag = this.varint();
    return { field: Math.floor(tag / 8), type: tag % 8 };
  }

  lengthDelimited(): Uint8Array {
    return this.take(this.varint());
  }

  skip(type: number): void {
    if (type === wireType.varint) this.varint();
    else if (type === wireType.fixed64) this.take(8);
    else if (type === wireType.lengthDelimited) this.lengthDelimited();
    else if (type === wireType.fixed32) this.take(4);
    else throw new RangeError(`unsupported wire type ${type}`);
  }
}

/**
 * The payload's metadata and data as protobuf bytes (what `temporal.api.common.v1.Payload.encode`
 * writes for a payload without external references).
 */
export function payloadToBytes(payload: Payload): Uint8Array {
  const writer = new Writer();
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (!value) continue;
    const entry = new Writer().lengthDelimited(1, textEncoder.encode(key)).lengthDelimited(2, value);
    writer.lengthDelimited(1, entry.bytes());
  }
  if (payload.data && payload.data.length > 0) writer.lengthDelimited(2, payload.data);
  return writer.bytes();
}

/** The payload that {@link payloadToBytes} wrote; throws a RangeError on malformed bytes. */
export function payloadFromBytes(bytes: Uint8Array): Payload {
  const reader = new Reader(bytes);
  const metadata: Record<string, Uint8Array> = {};
  let data: Uint8Array = new Uint8Array(0);
  while (!reader.done) {
    const { field, type } = reader.tag();
    if (type !== wireType.lengthDelimited || (field !== 1 && field !== 2)) {
      reader.skip(type);
      continue;
    }
    const body = reader.lengthDelimited();
    if (field === 1) {
      const entry = mapEntry(body);
      // Defined, not assigned: a key named `__proto__` would otherwise set the object's prototype.
      Object.defineProperty(metadata, entry.key, {
        value: entry.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else data = body;
  }
  return { metadata, data };
}

function mapEntry(bytes: Uint8Array): { key: string; value: Uint8Array } {
  const reader = new Reader(bytes);
  let key = '';
  let value: Uint8Array = new Uint8Array(0);
  while (!reader.done) {
    const { field, type } = reader.tag();
    if (type === wireType.lengthDelimited && field === 1) key = textDecoder.decode(reader.lengthDelimited());
    else if (type === wireType.lengthDelimited && field === 2) value = reader.lengthDelimited();
    else reader.skip(type);
  }
  return { key, value };
}
