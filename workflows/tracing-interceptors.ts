/**
 * SPEC S11.2: the workflow interceptors that trace agents-kit's workflows, in every bundle built with
 * `bundleOptions` (and the prebuilt one). Why not `@temporalio/interceptors-opentelemetry`'s workflow
 * interceptors: the OpenTelemetry SDK they run in the sandbox draws span and trace ids from
 * `Math.random`, which in a workflow is the workflow's seeded stream, so turning tracing on or off changes
 * every id the workflow draws with `uuid4()` after its first span (a replay on a worker configured the
 * other way silently disagrees with the history); their wrappers also await, which moves a traced
 * workflow's commands relative to an untraced one's. These interceptors only add headers and record
 * spans: every method returns the promise `next` returned, so traced and untraced workers run the same
 * history the same way (test/workflows/replay.test.ts replays the golden histories through them).
 * The headers are Temporal's (`_tracer-data`, a W3C carrier), so Temporal's client and activity
 * interceptors interoperate with them.
 */
import {
  ContinueAsNew,
  isCancellation,
  workflowInfo,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { previousRunHeader, traceHeader, traceIdOf, type SpanContext } from '../domain/trace-context';
import {
  activitySpanOf,
  childSpanOf,
  controlSendOf,
  messageAttributes,
  modelResultOf,
  runSpanOf,
  TraceSpanType,
} from '../domain/trace-attributes';
import { controlRequestSignal, sendMessageUpdate } from '../domain/messages';
import type { FinishedSpan } from '../domain/trace-span';
import type { Headers } from '@temporalio/common';
import { errorStatus, WorkflowTracer, type LiveSpan } from './workflow-tracer';

/** A cancelled activity (an interrupt) is not an error of the span. */
function activityStatus(span: LiveSpan, error: unknown): FinishedSpan['status'] {
  if (!isCancellation(error)) return errorStatus(error);
  span.setAttributes({ 'agents_kit.cancelled': true });
  return { code: 'unset' };
}

/** Starts the run's span from the headers the run was started (or continued) with. */
class TracingInbound implements WorkflowInboundCallsInterceptor {
  /** Signals handled so far in this run: the key of each receive span. */
  private received = 0;

  execute: NonNullable<WorkflowInboundCallsInterceptor['execute']> = (input, next) => {
    const info = workflowInfo();
    const run = runSpanOf(info.workflowType, input.args);
    if (!run) return next(input);
    const previous = WorkflowTracer.contextIn(input.headers, previousRunHeader);
    const tracer = new WorkflowTracer(run.name, {
      traceId: traceIdOf(run.traceKey),
      parent: WorkflowTracer.contextIn(input.headers),
      attributes: {
        ...run.attributes,
        'temporal.workflow.id': info.workflowId,
        'temporal.run.id': info.runId,
      },
      links: previous ? [{ ...previous, attributes: { 'agents_kit.link': 'previous-run' } }] : [],
    });
    WorkflowTracer.install(tracer);
    const span = tracer.run;
    return tracer.endWhenSettled(
      span,
      tracer.within(span, () => next(input)),
      {
        value: () => span.setAttributes({ 'agents_kit.run.end': 'completed' }),
        error: (error) => {
          if (!(error instanceof ContinueAsNew)) return errorStatus(error);
          span.setAttributes({ 'agents_kit.run.end': 'continued-as-new' });
          return { code: 'ok' };
        },
      },
    );
  };

  handleSignal: NonNullable<WorkflowInboundCallsInterceptor['handleSignal']> = (input, next) => {
    const tracer = WorkflowTracer.current();
    const remote = tracer && WorkflowTracer.contextIn(input.headers);
    if (!tracer || !remote || input.signalName !== controlRequestSignal.name) return next(input);
    const send = controlSendOf(input.args);
    const key = `signal-in:${++this.received}`;
    if (send.operation !== 'send-message')
      return this.handle(tracer, key, send.operation, remote, () => next(input));
    return this.receive(tracer, key, send, remote, () => next(input));
  };

  handleUpdate: NonNullable<WorkflowInboundCallsInterceptor['handleUpdate']> = (input, next) => {
    const tracer = WorkflowTracer.current();
    const remote = tracer && WorkflowTracer.contextIn(input.headers);
    if (!tracer || !remote) return next(input);
    if (input.name !== sendMessageUpdate.name)
      return this.handle(tracer, `update:${input.updateId}`, input.name, remote, () => next(input));
    const [capability, request] = input.args as [{ threadId?: unknown } | undefined, unknown];
    const send = controlSendOf([
      { from: capability, operation: { type: 'send-message', request }, operationId: input.updateId },
    ]);
    return this.receive(tracer, `update:${input.updateId}`, send, remote, () => next(input));
  };

  /**
   * An operation other than a message. From the tree's own trace (a thread's request to the root) it
   * runs in its sender's context, so what it starts (a spawn's child) is the sender's doing; from another
   * trace (a client's request) it gets a span of the tree's trace linked to the caller's, so a tree's
   * spans stay in one trace however many requests of a backend act on it.
   */
  private handle<Result>(
    tracer: WorkflowTracer,
    key: string,
    operation: string,
    remote: SpanContext,
    handle: () => Promise<Result>,
  ): Promise<Result> {
    if (remote.traceId === tracer.run.context.traceId) return tracer.within(remote, handle);
    const span = tracer.startSpan(key, `handle ${operation}`, {
      kind: 'consumer',
      parent: tracer.run.context,
      attributes: { 'agents_kit.span': TraceSpanType.request, 'agents_kit.operation': operation },
      links: [{ ...remote, attributes: { 'agents_kit.link': 'caller' } }],
    });
    return tracer.endWhenSettled(span, tracer.within(span, handle));
  }

  /** A message's arrival: a span of this run linked to the sender's span (SPEC S11.2: messages as links). */
  private receive<Result>(
    tracer: WorkflowTracer,
    key: string,
    send: ReturnType<typeof controlSendOf>,
    remote: SpanContext,
    handle: () => Promise<Result>,
  ): Promise<Result> {
    const span = tracer.startSpan(key, `receive_message ${send.from ?? 'client'}`, {
      kind: 'consumer',
      parent: tracer.run.context,
      attributes: messageAttributes(send, TraceSpanType.messageReceive),
      links: [{ ...remote, attributes: { 'agents_kit.link': 'message' } }],
    });
    return tracer.endWhenSettled(span, tracer.within(span, handle));
  }
}

/** Spans for model and tool calls, sub-agent starts and messages; the trace context in their headers. */
class TracingOutbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity: NonNullable<WorkflowOutboundCallsInterceptor['scheduleActivity']> = (input, next) =>
    this.activity(`activity:${input.seq}`, input.activityType, input.args, (headers) =>
      next({ ...input, headers: headers(input.headers) }),
    );

  scheduleLocalActivity: NonNullable<WorkflowOutboundCallsInterceptor['scheduleLocalActivity']> = (
    input,
    next,
  ) =>
    this.activity(`local-activity:${input.seq}`, input.activityType, input.args, (headers) =>
      next({ ...input, headers: headers(input.headers) }),
    );

  startChildWorkflowExecution: NonNullable<WorkflowOutboundCallsInterceptor['startChildWorkflowExecution']> =
    (input, next) => {
      const tracer = WorkflowTracer.current();
      const described = tracer && childSpanOf(input.workflowType, input.options.args ?? []);
      if (!tracer || !described) return next(input);
      const span = tracer.startSpan(`child:${input.seq}`, described.name, described);
      const started = next({ ...input, headers: WorkflowTracer.headersWith(input.headers, span.context) });
      void started.then(
        ([runId]) => void tracer.endWhenSettled(span, runId),
        (error: unknown) => tracer.end(span, errorStatus(error)),
      );
      return started;
    };

  signalWorkflow: NonNullable<WorkflowOutboundCallsInterceptor['signalWorkflow']> = (input, next) => {
    const tracer = WorkflowTracer.current();
    if (!tracer || input.signalName !== controlRequestSignal.name) return next(input);
    const send = controlSendOf(input.args);
    const message = send.operation === 'send-message';
    const span = tracer.startSpan(
      `signal:${input.seq}`,
      message ? `send_message ${send.recipient ?? '?'}` : `${send.operation} request`,
      {
        kind: 'producer',
        attributes: message
          ? messageAttributes(send, TraceSpanType.messageSend)
          : { 'agents_kit.span': TraceSpanType.control, 'agents_kit.operation': send.operation },
      },
    );
    return tracer.endWhenSettled(
      span,
      next({ ...input, headers: WorkflowTracer.headersWith(input.headers, span.context) }),
    );
  };

  continueAsNew: NonNullable<WorkflowOutboundCallsInterceptor['continueAsNew']> = (input, next) => {
    const tracer = WorkflowTracer.current();
    if (!tracer) return next(input);
    // The next run has the same parent as this one, and a link back to this run.
    const { context, parentSpanId } = tracer.run;
    const { [traceHeader]: _previousParent, ...headers } = input.headers;
    const carried = parentSpanId
      ? WorkflowTracer.headersWith(headers, { traceId: context.traceId, spanId: parentSpanId })
      : headers;
    return next({ ...input, headers: WorkflowTracer.headersWith(carried, context, previousRunHeader) });
  };

  /** A model or tool call's span, around the activity `schedule` starts with the headers it is given. */
  private activity<Result>(
    key: string,
    activityType: string,
    args: unknown[],
    schedule: (headers: (given: Headers) => Headers) => Promise<Result>,
  ): Promise<Result> {
    const tracer = WorkflowTracer.current();
    const described = tracer && activitySpanOf(activityType, args);
    if (!tracer || !described) return schedule((given) => given);
    const span = tracer.startSpan(key, described.name, described);
    const result = schedule((given) => WorkflowTracer.headersWith(given, span.context));
    return tracer.endWhenSettled(span, result, {
      value: (output) => {
        if (activityType !== 'callModel') return;
        const answered = modelResultOf(output);
        if (answered.name) span.name = answered.name;
        span.setAttributes(answered.attributes);
      },
      error: (error) => activityStatus(span, error),
    });
  }
}

/** The interceptors of one workflow (the SDK calls this for each workflow it creates). */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TracingInbound()],
  outbound: [new TracingOutbound()],
});
