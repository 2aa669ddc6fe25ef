// SPEC S11.2: the tracing configuration (standard OpenTelemetry variables, off unless an endpoint is
// set) and the conversion of the spans workflow code records into OpenTelemetry's.
import { Resource } from '@opentelemetry/resources';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { readableSpanOf } from '../../client/finished-spans';
import { createTracing, tracesEndpointOf, tracingFromEnvironment } from '../../client/tracing';
import { KitError } from '../../domain/errors';

test('tracing is off unless an OTLP endpoint is set, and can be turned off with the standard switches', async () => {
  expect(tracesEndpointOf({})).toBeUndefined();
  expect(await tracingFromEnvironment({})).toBeUndefined();
  expect(tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
    'http://collector:4318/v1/traces',
  );
  expect(tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
    'http://collector:4318/v1/traces',
  );
  expect(
    tracesEndpointOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
    }),
  ).toBe('https://traces.example/otlp');
  for (const off of [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }])
    expect(
      tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...off }),
    ).toBeUndefined();
  // Empty means unset, as for every agents-kit variable.
  expect(tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
});

test('a malformed tracing variable is a Protocol error that names it', () => {
  const refusal = (environment: Record<string, string>) => {
    try {
      tracesEndpointOf(environment);
    } catch (error) {
      return error;
    }
    throw new Error('accepted');
  };
  for (const [name, value] of [
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'ftp://collector'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_TRACES_EXPORTER', 'zipkin'],
    ['OTEL_RESOURCE_ATTRIBUTES', '==='],
    ['OTEL_RESOURCE_ATTRIBUTES', 'team=agents,oops'],
  ] as const) {
    const error = refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', [name]: value });
    expect(error).toBeInstanceOf(KitError);
    expect((error as KitError).kind).toBe('Protocol');
    expect((error as KitError).message).toContain(name);
  }
  // Well-formed attributes pass.
  expect(
    tracesEndpointOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod, team=agents,empty=',
    }),
  ).toBe('http://collector:4318/v1/traces');
});

test('createTracing refuses an endpoint that is not an http(s) URL', async () => {
  for (const endpoint of [42, 'ftp://x', 'collector:4318']) {
    const error: unknown = await createTracing({ endpoint: endpoint as string }).then(
      () => 'accepted',
      (refused: unknown) => refused,
    );
    expect(KitError.is(error) && `${error.kind}: ${error.message}`).toMatch(
      /^Protocol: invalid tracing options: endpoint/,
    );
  }
});

test('a recorded span becomes an OpenTelemetry span; a malformed one is dropped', () => {
  const resource = new Resource({ 'service.name': 'test' });
  const origin = {
    workflowId: 'thread_1',
    workflowType: 'agentWorkflow',
    namespace: 'default',
    taskQueue: 'q',
  };
  const span = readableSpanOf(
    {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      parentSpanId: '1111111111111111',
      name: 'invoke_agent /root/a',
      kind: 'consumer',
      startTimeMs: 1_700_000_000_123,
      endTimeMs: 1_700_000_001_623,
      attributes: { 'agents_kit.turn': 2 },
      events: [{ name: 'approval-request', timeMs: 1_700_000_000_500 }],
      links: [{ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '2222222222222222' }],
      status: { code: 'error', message: 'failed' },
    },
    resource,
    origin,
  )!;
  expect(span.spanContext()).toMatchObject({
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
  });
  expect(span.parentSpanId).toBe('1111111111111111');
  expect(span.kind).toBe(SpanKind.CONSUMER);
  expect(span.startTime).toEqual([1_700_000_000, 123_000_000]);
  expect(span.duration).toEqual([1, 500_000_000]);
  expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed' });
  expect(span.attributes).toMatchObject({ 'agents_kit.turn': 2, 'temporal.workflow.id': 'thread_1' });
  expect(span.events).toEqual([{ name: 'approval-request', time: [1_700_000_000, 500_000_000] }]);
  expect(span.links[0]!.context.spanId).toBe('2222222222222222');
  expect(span.resource).toBe(resource);
  expect(readableSpanOf({ traceId: 'nope' }, resource, origin)).toBeUndefined();
  expect(readableSpanOf({ ...span, spanId: '0000000000000000' }, resource, origin)).toBeUndefined();
});
