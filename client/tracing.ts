import type { Tracer } from '@opentelemetry/api';
import type { IResource } from '@opentelemetry/resources';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { objectInput, parseInput } from '../domain/errors';
import { readableSpanOf, instrumentationScope, type SpanOrigin } from './finished-spans';

/** How {@link createTracing} exports spans. */
export interface TracingOptions {
  /** Where spans go. Default: OTLP over HTTP/protobuf to {@link endpoint}. */
  exporter?: SpanExporter | undefined;
  /**
   * The OTLP/HTTP traces URL (`http://collector:4318/v1/traces`). Default: what the OTLP exporter reads
   * from the standard `OTEL_EXPORTER_OTLP_*` variables, else `http://localhost:4318/v1/traces`.
   */
  endpoint?: string | undefined;
  /** `service.name` of the spans (default: `OTEL_SERVICE_NAME`, else `agents-kit`). */
  serviceName?: string | undefined;
  /** How long finished spans wait to be sent together (default 1 s). */
  scheduledDelayMs?: number | undefined;
}

/**
 * SPEC S11.2: where one process's spans go — a tracer for client spans (attach, send) and the workflow
 * spans its worker's sink receives, batched to one exporter. Shut it down when the process is done
 * (flushes what is buffered; never waits past its timeout).
 */
export interface Tracing {
  /** For client spans: give it to `tracingInterceptors(tracing.tracer)`. */
  readonly tracer: Tracer;
  readonly resource: IResource;
  /** Hands finished workflow spans (from the worker's sink) to the exporter's batch. */
  exportWorkflowSpans(origin: SpanOrigin, spans: readonly unknown[]): void;
  /** Sends what is buffered; resolves after `timeoutMs` (default 5 s) at the latest. */
  forceFlush(timeoutMs?: number): Promise<void>;
  /** Flushes and closes the exporter; resolves after `timeoutMs` (default 5 s) at the latest. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The last `capacity` ids seen: `add` says whether an id is new. */
class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}

/** Resolves when `work` settles or after `ms`, whichever is first (the timer never holds the process). */
async function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((done) => {
    timer = setTimeout(done, ms);
    timer.unref();
  });
  await Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    timeout,
  ]);
  clearTimeout(timer);
}

/**
 * Tracing that exports OTLP (or to `options.exporter`). The OpenTelemetry SDK is loaded here, not when
 * agents-kit is imported, so a process without tracing does not pay for it.
 *
 * @example
 * const tracing = await createTracing({ endpoint: 'http://127.0.0.1:4318/v1/traces', serviceName: 'billing-agents' });
 * const worker = await createAgentWorker({ connection, taskQueue, activities, tracing });
 * try { await worker.run(); } finally { await tracing.shutdown(); }
 */
export async function createTracing(options: TracingOptions = {}): Promise<Tracing> {
  objectInput(options, 'tracing options');
  if (options.endpoint !== undefined) parseInput(httpUrl, options.endpoint, 'tracing options: endpoint');
  const [{ BasicTracerProvider, BatchSpanProcessor }, { Resource, envDetectorSync }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
  ]);
  const exporter =
    options.exporter ??
    new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(
      options.endpoint ? { url: options.endpoint } : {},
    );
  const fromEnvironment = envDetectorSync.detect();
  const serviceName =
    options.serviceName ?? (fromEnvironment.attributes['service.name'] as string | undefined) ?? 'agents-kit';
  const resource = Resource.default()
    .merge(fromEnvironment)
    .merge(new Resource({ 'service.name': serviceName }));
  const processor = new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: options.scheduledDelayMs ?? 1_000,
    exportTimeoutMillis: 10_000,
  });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const exported = new RecentIds(100_000);
  let closed = false;
  return {
    tracer: provider.getTracer(instrumentationScope.name, instrumentationScope.version),
    resource,
    exportWorkflowSpans(origin, spans) {
      if (closed) return;
      for (const raw of spans) {
        const span = readableSpanOf(raw, resource, origin);
        // A workflow task the server refused (a completion that raced a new event) runs again, and
        // ends its spans again with the same ids: each is exported once.
        if (span && exported.add(`${span.spanContext().traceId}/${span.spanContext().spanId}`))
          processor.onEnd(span);
      }
    },
    forceFlush: (timeoutMs = 5_000) => atMost(provider.forceFlush(), timeoutMs),
    async shutdown(timeoutMs = 5_000) {
      if (closed) return;
      closed = true;
      await atMost(provider.shutdown(), timeoutMs);
    },
  };
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL, like http://127.0.0.1:4318' });

/** The standard OpenTelemetry variables agents-kit reads (SPEC S8.3: validated at start-up). */
export const TracingEnvironment = z.object({
  /** The OTLP/HTTP endpoint; traces go to its `/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /** The traces URL itself (wins over OTEL_EXPORTER_OTLP_ENDPOINT). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .literal('http/protobuf', {
      error: 'agents-kit exports OTLP as http/protobuf: set that or leave it unset',
    })
    .optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z
    .literal('http/protobuf', {
      error: 'agents-kit exports OTLP as http/protobuf: set that or leave it unset',
    })
    .optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'expected otlp or none' }).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { error: 'expected true or false' }).optional(),
  /** `key=value` pairs separated by commas (OpenTelemetry's own reader drops a malformed list silently). */
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .regex(
      /^\s*[^=,\s][^=,]*=[^,]*(,\s*[^=,\s][^=,]*=[^,]*)*$/,
      'expected key=value pairs separated by commas',
    )
    .optional(),
});
export type TracingEnvironment = z.infer<typeof TracingEnvironment>;

/** The traces URL the environment names, or undefined when tracing is off (no endpoint, or disabled). */
export function tracesEndpointOf(environment: Record<string, string | undefined>): string | undefined {
  const present = Object.fromEntries(
    Object.entries(environment).filter(
      ([name, value]) => name in TracingEnvironment.shape && value !== undefined && value !== '',
    ),
  );
  const config = parseInput(TracingEnvironment, present, 'environment');
  if (config.OTEL_SDK_DISABLED === 'true' || config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Tracing as the standard OpenTelemetry variables configure it (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`), or undefined when no endpoint is set:
 * tracing is off unless configured. A malformed variable is a Protocol KitError naming it.
 */
export async function tracingFromEnvironment(
  environment: Record<string, string | undefined> = process.env,
  defaults: { serviceName: string } = { serviceName: 'agents-kit' },
): Promise<Tracing | undefined> {
  const endpoint = tracesEndpointOf(objectInput(environment, 'environment'));
  if (!endpoint) return undefined;
  return createTracing({
    endpoint,
    serviceName: environment.OTEL_SERVICE_NAME || defaults.serviceName,
  });
}
