import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import type { IResource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { FinishedSpan } from '../domain/trace-span';

/** The workflow a span was recorded in (from the sink call's workflow info). */
export interface SpanOrigin {
  workflowId: string;
  workflowType: string;
  namespace: string;
  taskQueue: string;
}

const kinds: Record<FinishedSpan['kind'], SpanKind> = {
  internal: SpanKind.INTERNAL,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};
const statusCodes: Record<FinishedSpan['status']['code'], SpanStatusCode> = {
  unset: SpanStatusCode.UNSET,
  ok: SpanStatusCode.OK,
  error: SpanStatusCode.ERROR,
};

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1_000_000)];

/** The instrumentation scope of every span agents-kit records. */
export const instrumentationScope = { name: 'agents-kit', version: '0.1.0' };

/**
 * SPEC S11.2: a span recorded by workflow code (domain/trace-span.ts) as the OpenTelemetry SDK's
 * ReadableSpan, ready for any span processor or exporter; undefined for a malformed one (it came across
 * a sink from a workflow bundle this worker does not know, so it is dropped, not exported half right).
 */
export function readableSpanOf(
  raw: unknown,
  resource: IResource,
  origin: SpanOrigin,
): ReadableSpan | undefined {
  const parsed = FinishedSpan.safeParse(raw);
  if (!parsed.success) return undefined;
  const span = parsed.data;
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
  const durationMs = Math.max(0, span.endTimeMs - span.startTimeMs);
  return {
    name: span.name,
    kind: kinds[span.kind],
    spanContext: () => context,
    ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
    startTime: hrTime(span.startTimeMs),
    endTime: hrTime(span.endTimeMs),
    duration: hrTime(durationMs),
    status: {
      code: statusCodes[span.status.code],
      ...(span.status.message !== undefined ? { message: span.status.message } : {}),
    },
    attributes: {
      ...span.attributes,
      'temporal.workflow.id': origin.workflowId,
      'temporal.workflow.type': origin.workflowType,
      'temporal.namespace': origin.namespace,
      'temporal.task_queue': origin.taskQueue,
    },
    links: span.links.map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true },
      ...(link.attributes ? { attributes: link.attributes } : {}),
    })),
    events: span.events.map((event) => ({
      name: event.name,
      time: hrTime(event.timeMs),
      ...(event.attributes ? { attributes: event.attributes } : {}),
    })),
    ended: true,
    resource,
    instrumentationLibrary: instrumentationScope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
