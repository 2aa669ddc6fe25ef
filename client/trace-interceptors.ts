import {
  context,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ClientInterceptors, WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { operationTypes, updateNameOf } from '../domain/operations';
import { traceHeader } from '../domain/trace-context';
import { instrumentationScope } from './finished-spans';

const propagator = new W3CTraceContextPropagator();

/** The updates that get a client span: the control operations and the run's lifecycle, not long-polls. */
const tracedUpdates = new Set<string>([
  ...operationTypes.flatMap((type) => {
    const name = updateNameOf(type) as string | undefined;
    return name ? [name] : [];
  }),
  'shutdown',
  'complete-root',
  'reconcile',
  'revoke-grant',
]);

/** `headers` with `span`'s context in the trace header, as agents-kit's workflow interceptors read it. */
function headersWith(headers: Headers, span: Span): Headers {
  const carrier: Record<string, string> = {};
  propagator.inject(trace.setSpan(context.active(), span), carrier, {
    set: (target, key, value) => void ((target as Record<string, string>)[key] = value),
  });
  return { ...headers, [traceHeader]: defaultPayloadConverter.toPayload(carrier) };
}

/** Runs `call` in a new span (a child of the caller's active span) and ends the span with its outcome. */
async function inSpan<Result>(
  tracer: Tracer,
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  call: (span: Span) => Promise<Result>,
): Promise<Result> {
  const span = tracer.startSpan(name, { kind, attributes }, context.active());
  try {
    return await call(span);
  } catch (error) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * SPEC S11.2: Temporal client interceptors that trace what a client does to a tree — attaching a root
 * run (the parent of the root run's span), sending a message (linked from the recipient's receive span)
 * and the other control operations — and carry the span in the workflow's headers. Spans are children
 * of the caller's active span, if it has one.
 *
 * @example
 * const tracing = await tracingFromEnvironment(); // or createTracing({ ... }); undefined: tracing off
 * const client = new Client({ connection, interceptors: tracing ? tracingInterceptors(tracing.tracer) : {} });
 */
export function tracingInterceptors(
  tracer: Tracer = trace.getTracer(instrumentationScope.name, instrumentationScope.version),
): ClientInterceptors {
  const workflow: WorkflowClientInterceptor = {
    start: (input, next) =>
      input.workflowType !== 'rootRunWorkflow'
        ? next(input)
        : inSpan(
            tracer,
            `attach ${input.options.workflowId}`,
            SpanKind.CLIENT,
            {
              'agents_kit.span': 'attach',
              'gen_ai.operation.name': 'create_agent',
              'gen_ai.agent.id': input.options.workflowId,
              'temporal.workflow.id': input.options.workflowId,
            },
            (span) => next({ ...input, headers: headersWith(input.headers, span) }),
          ),
    startUpdate: (input, next) => {
      if (!tracedUpdates.has(input.updateName)) return next(input);
      const message = input.updateName === (updateNameOf('send-message') as string);
      const target = input.workflowExecution.workflowId;
      return inSpan(
        tracer,
        message ? `send_message ${target}` : `${input.updateName} ${target}`,
        message ? SpanKind.PRODUCER : SpanKind.CLIENT,
        {
          'agents_kit.span': message ? 'message-send' : 'client-update',
          'agents_kit.operation': input.updateName,
          ...(message ? { 'agents_kit.message.recipient': target } : {}),
          'temporal.workflow.id': target,
          ...(input.options.updateId ? { 'temporal.update.id': input.options.updateId } : {}),
        },
        (span) => next({ ...input, headers: headersWith(input.headers, span) }),
      );
    },
    signal: (input, next) =>
      inSpan(
        tracer,
        `${input.signalName} ${input.workflowExecution.workflowId}`,
        SpanKind.PRODUCER,
        {
          'agents_kit.span': 'client-signal',
          'agents_kit.operation': input.signalName,
          'temporal.workflow.id': input.workflowExecution.workflowId,
        },
        (span) => next({ ...input, headers: headersWith(input.headers, span) }),
      ),
  };
  return { workflow: [workflow] };
}
