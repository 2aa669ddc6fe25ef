import {
  AsyncLocalStorage,
  defaultPayloadConverter,
  proxySinks,
  workflowInfo,
  type Sinks,
} from '@temporalio/workflow';
import type { Headers } from '@temporalio/common';
import {
  formatTraceparent,
  parseTraceparent,
  spanIdOf,
  traceHeader as traceHeaderName,
  tracingSinkName,
  type SpanContext,
} from '../domain/trace-context';
// A value import, so the module's schemas are built (and finished) with the shared modules before the
// SDK freezes them (workflows/shared-modules.ts), though only the worker parses with them.
import { SpanKind } from '../domain/trace-span';
import type { FinishedSpan, SpanAttributes, SpanEvent, SpanLink } from '../domain/trace-span';

/** The sink a worker registers for workflow spans (`createAgentWorker` always does). */
export interface TracingSinks extends Sinks {
  [tracingSinkName]: { export(spans: FinishedSpan[]): void };
}

/** A span this workflow is recording; it is exported, once, when it ends. */
export class LiveSpan {
  readonly events: SpanEvent[] = [];
  private ended = false;

  constructor(
    readonly context: SpanContext,
    readonly parentSpanId: string | undefined,
    public name: string,
    readonly kind: SpanKind,
    readonly startTimeMs: number,
    readonly attributes: SpanAttributes,
    readonly links: SpanLink[],
  ) {}

  addEvent(name: string, attributes?: SpanAttributes): void {
    if (!this.ended) this.events.push({ name, timeMs: Date.now(), ...(attributes ? { attributes } : {}) });
  }

  setAttributes(attributes: SpanAttributes): void {
    Object.assign(this.attributes, attributes);
  }

  /** The span as exported; undefined when it has ended before (an end is final). */
  finish(status: FinishedSpan['status']): FinishedSpan | undefined {
    if (this.ended) return undefined;
    this.ended = true;
    return {
      ...this.context,
      ...(this.parentSpanId ? { parentSpanId: this.parentSpanId } : {}),
      name: this.name,
      kind: this.kind,
      startTimeMs: this.startTimeMs,
      endTimeMs: Math.max(this.startTimeMs, Date.now()),
      attributes: this.attributes,
      events: this.events,
      links: this.links,
      status,
    };
  }
}

/** What is active in a piece of workflow code: a span of this workflow, or a context a header brought. */
type Active = LiveSpan | SpanContext;
const contextOf = (active: Active): SpanContext => (active instanceof LiveSpan ? active.context : active);

// One store for every workflow of a worker thread: this module is shared by them (shared-modules.ts), and
// a store per workflow would make every promise of the thread pay for each cached workflow. A value only
// flows through the promises of the workflow that set it.
const storage = new AsyncLocalStorage<Active>();

const tracerKey = Symbol.for('agents-kit.workflow-tracer');

/** How a span starts: its parent (default: what is active), attributes and links. */
export interface SpanStart {
  kind?: SpanKind;
  parent?: SpanContext | undefined;
  attributes?: SpanAttributes;
  links?: SpanLink[];
}

/**
 * The tracer of one workflow run (SPEC S11.2). Replay-safe by construction: span ids are derived from
 * keys the history fixes, times are workflow time, nothing draws from the workflow's random stream, and
 * finished spans leave through a sink that is not called while history is replayed, so a replayed run
 * (after a worker restart or a cache eviction) exports nothing twice. Nothing here awaits: every call
 * returns the promise it was given, so tracing on or off, the workflow's commands come in the same order.
 */
export class WorkflowTracer {
  private readonly sink = proxySinks<TracingSinks>()[tracingSinkName];
  /** The span of this run, the parent of everything the run does outside any other span. */
  readonly run: LiveSpan;

  constructor(name: string, start: SpanStart & { traceId: string }) {
    const parent = start.parent;
    this.run = new LiveSpan(
      { traceId: parent?.traceId ?? start.traceId, spanId: this.spanId('run') },
      parent?.spanId,
      name,
      start.kind ?? SpanKind.internal,
      Date.now(),
      { ...start.attributes },
      start.links ?? [],
    );
  }

  /** The tracer of the running workflow, if it is traced. */
  static current(): WorkflowTracer | undefined {
    return (globalThis as Record<symbol, unknown>)[tracerKey] as WorkflowTracer | undefined;
  }

  /** Makes `tracer` the running workflow's (globals are the workflow's own, see the SDK's reusable VM). */
  static install(tracer: WorkflowTracer): void {
    Object.defineProperty(globalThis, tracerKey, { value: tracer, configurable: true, writable: true });
  }

  /** The span id for `key`, unique in this run and the same on every replay of it. */
  spanId(key: string): string {
    return spanIdOf(`${workflowInfo().runId}/${key}`);
  }

  /** The context code runs in now: the innermost span or header context, else the run's span. */
  active(): SpanContext {
    return contextOf(storage.getStore() ?? this.run);
  }

  /** The innermost span of this workflow that is active (to add an event to it), if any. */
  activeSpan(): LiveSpan | undefined {
    const active = storage.getStore();
    return active instanceof LiveSpan ? active : undefined;
  }

  /** Starts a span under `start.parent` (or what is active); `key` makes its id (see {@link spanId}). */
  startSpan(key: string, name: string, start: SpanStart = {}): LiveSpan {
    const parent = start.parent ?? this.active();
    return new LiveSpan(
      { traceId: parent.traceId, spanId: this.spanId(key) },
      parent.spanId,
      name,
      start.kind ?? SpanKind.internal,
      Date.now(),
      { ...start.attributes },
      start.links ?? [],
    );
  }

  /** Runs `fn` with `active` as the current span or context; returns what `fn` returns, untouched. */
  within<Result>(active: Active, fn: () => Result): Result {
    return storage.run(active, fn);
  }

  /**
   * Ends `span` when `promise` settles (`describe` turns a rejection into a status) and returns the same
   * promise: the caller's continuation runs exactly when it would have without tracing.
   */
  endWhenSettled<Value>(
    span: LiveSpan,
    promise: Promise<Value>,
    settled: {
      value?: (value: Value) => void;
      error?: (error: unknown) => FinishedSpan['status'];
    } = {},
  ): Promise<Value> {
    void promise.then(
      (value) => {
        settled.value?.(value);
        this.end(span, { code: 'ok' });
      },
      (error: unknown) => this.end(span, settled.error?.(error) ?? errorStatus(error)),
    );
    return promise;
  }

  /** Ends `span` and exports it, unless this is history being replayed (it was exported then). */
  end(span: LiveSpan, status: FinishedSpan['status']): void {
    const finished = span.finish(status);
    if (finished && !workflowInfo().unsafe.isReplaying) this.sink.export([finished]);
  }

  /** `headers` with `context` in header `name` (the trace header by default). */
  static headersWith(headers: Headers, context: SpanContext, name = traceHeaderName): Headers {
    return { ...headers, [name]: encode(context) };
  }

  /** The context in header `name` (the trace header by default), if a valid one is there. */
  static contextIn(headers: Headers, name = traceHeaderName): SpanContext | undefined {
    const payload = headers[name];
    if (!payload) return undefined;
    try {
      const carrier = defaultPayloadConverter.fromPayload<{ traceparent?: unknown }>(payload);
      return parseTraceparent(carrier?.traceparent);
    } catch {
      return undefined;
    }
  }
}

/** A header payload as Temporal's OpenTelemetry interceptors write it: a W3C carrier as JSON. */
const encode = (context: SpanContext) =>
  defaultPayloadConverter.toPayload({ traceparent: formatTraceparent(context) });

/** The status of a span whose work failed with `error`. */
export function errorStatus(error: unknown): FinishedSpan['status'] {
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'error', message: message.slice(0, 1_000) };
}
