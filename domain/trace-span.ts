import { z } from 'zod';
import { matching } from './ids';

/**
 * SPEC S11.2: a finished span as workflow code hands it to the worker (through a Temporal sink), which
 * turns it into an OpenTelemetry span and exports it. Plain data: the OpenTelemetry SDK never runs in the
 * workflow sandbox.
 */
export const SpanKind = {
  internal: 'internal',
  client: 'client',
  producer: 'producer',
  consumer: 'consumer',
} as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

const TraceId = matching(/^(?!0{32})[0-9a-f]{32}$/, 'expected 32 lowercase hex digits, not all zero');
const SpanId = matching(/^(?!0{16})[0-9a-f]{16}$/, 'expected 16 lowercase hex digits, not all zero');

/** Attribute values OpenTelemetry takes (and OTLP carries). */
export const SpanAttributes = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]),
);
export type SpanAttributes = z.infer<typeof SpanAttributes>;

export const SpanEvent = z.object({
  name: z.string().min(1),
  timeMs: z.number(),
  attributes: SpanAttributes.optional(),
});
export type SpanEvent = z.infer<typeof SpanEvent>;

export const SpanLink = z.object({
  traceId: TraceId,
  spanId: SpanId,
  attributes: SpanAttributes.optional(),
});
export type SpanLink = z.infer<typeof SpanLink>;

export const FinishedSpan = z.object({
  traceId: TraceId,
  spanId: SpanId,
  parentSpanId: SpanId.optional(),
  name: z.string().min(1),
  kind: z.enum(['internal', 'client', 'producer', 'consumer']),
  /** Workflow time (the workflow task's start): the same on every replay. */
  startTimeMs: z.number(),
  endTimeMs: z.number(),
  attributes: SpanAttributes,
  events: z.array(SpanEvent),
  links: z.array(SpanLink),
  status: z.object({ code: z.enum(['unset', 'ok', 'error']), message: z.string().optional() }),
});
export type FinishedSpan = z.infer<typeof FinishedSpan>;
