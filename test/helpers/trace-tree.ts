// Reading the tree of spans a collector received (SPEC S11.2).
import type { ReceivedSpan } from './otel-collector';

/** The spans of one trace, indexed for walking up from any of them. */
export class TraceTree {
  private readonly byId = new Map<string, ReceivedSpan>();

  constructor(readonly spans: readonly ReceivedSpan[]) {
    for (const span of spans) this.byId.set(span.spanId, span);
  }

  /** The spans whose `agents_kit.span` is `type` (and whose other attributes match `where`). */
  ofType(type: string, where: Record<string, unknown> = {}): ReceivedSpan[] {
    return this.spans.filter(
      (span) =>
        span.attributes['agents_kit.span'] === type &&
        Object.entries(where).every(([key, value]) => span.attributes[key] === value),
    );
  }

  /** The one span of `type` matching `where` (fails the test when there is not exactly one). */
  one(type: string, where: Record<string, unknown> = {}): ReceivedSpan {
    const found = this.ofType(type, where);
    if (found.length !== 1)
      throw new Error(
        `expected one ${type} span with ${JSON.stringify(where)}, got ${found.length}: ${found.map((span) => span.name).join(', ')}`,
      );
    return found[0]!;
  }

  parentOf(span: ReceivedSpan): ReceivedSpan | undefined {
    return span.parentSpanId ? this.byId.get(span.parentSpanId) : undefined;
  }

  /** The `agents_kit.span` types from `span` up to the top of the tree (span's own first). */
  lineage(span: ReceivedSpan): string[] {
    const types: string[] = [];
    for (let current: ReceivedSpan | undefined = span; current; current = this.parentOf(current))
      types.push(String(current.attributes['agents_kit.span'] ?? current.name));
    return types;
  }

  /** Whether `ancestor` is above `span` in the tree. */
  descends(span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
    for (let current = this.parentOf(span); current; current = this.parentOf(current))
      if (current.spanId === ancestor.spanId) return true;
    return false;
  }

  /** Span ids that were received more than once. */
  duplicates(): string[] {
    const seen = new Set<string>();
    const twice = new Set<string>();
    for (const span of this.spans) (seen.has(span.spanId) ? twice : seen).add(span.spanId);
    return [...twice];
  }

  /** Spans whose parent is not in the trace (every parent must have been exported too). */
  orphans(): ReceivedSpan[] {
    return this.spans.filter((span) => span.parentSpanId && !this.byId.has(span.parentSpanId));
  }
}
