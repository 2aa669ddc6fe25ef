import { DefaultPayloadConverter, type Payload, type PayloadConverter } from '@temporalio/common';

/**
 * What a payload that cannot be decoded reads as: a value every handler refuses as malformed (SPEC
 * S3.10), so a signal, update or query from a raw client with bytes that are not JSON, or an encoding
 * nobody knows, changes nothing.
 */
export interface UndecodablePayload {
  undecodablePayload: string;
}

/**
 * Temporal's default payload conversion, except that decoding never throws. The SDK decodes a signal's
 * arguments inside the workflow task, and with the default converter one signal whose bytes are not
 * JSON fails that task on every attempt: it stays in history, so the workflow is wedged for good and
 * every update to it fails ("Workflow Task in failed state"). Any client that can signal could do it.
 * Encoding is unchanged, so this converter writes exactly what the default one does, and every payload
 * the default one decodes decodes the same: histories replay as they ran.
 */
class TotalPayloadConverter implements PayloadConverter {
  private readonly inner = new DefaultPayloadConverter();

  toPayload<T>(value: T): Payload {
    return this.inner.toPayload(value);
  }

  fromPayload<T>(payload: Payload): T {
    try {
      return this.inner.fromPayload<T>(payload);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const undecodable: UndecodablePayload = { undecodablePayload: reason.slice(0, 200) };
      return undecodable as T;
    }
  }
}

/** The converter of every agents-kit workflow bundle and worker (`payloadConverterPath` names this module). */
export const payloadConverter: PayloadConverter = new TotalPayloadConverter();
