/**
 * SPEC S11.2: the identities of agents-kit's trace spans, workflow-safe. Workflow code cannot use the
 * OpenTelemetry SDK's random ids: they come from `Math.random`, which in a workflow is the workflow's own
 * seeded stream, so tracing would change every `uuid4()` the workflow draws after it (a worker with
 * tracing on and one with it off would disagree on message and request ids while replaying the same
 * history). Span ids are therefore hashes of what the history already fixes (run id, command sequence
 * number, turn number), the same on every replay and on every worker.
 */

/** A span's place in a trace, as W3C Trace Context carries it. */
export interface SpanContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
}

/** The Temporal header the trace context travels in: the one Temporal's OpenTelemetry interceptors use. */
export const traceHeader = '_tracer-data';
/** The Temporal sink workflow code exports its finished spans through (`callDuringReplay: false`). */
export const tracingSinkName = 'agentsKitTracing';
/** The header a continued run gets its previous run's span in, for a link between the two. */
export const previousRunHeader = 'agents-kit-previous-run';

const mask64 = (1n << 64n) - 1n;

/** FNV-1a over the UTF-16 units of `text`, finished with MurmurHash3's 64-bit mixer for avalanche. */
function hash64(text: string, seed: bigint): bigint {
  let hash = 0xcbf29ce484222325n ^ seed;
  for (let index = 0; index < text.length; index++) {
    hash ^= BigInt(text.charCodeAt(index));
    hash = (hash * 0x100000001b3n) & mask64;
  }
  hash ^= hash >> 33n;
  hash = (hash * 0xff51afd7ed558ccdn) & mask64;
  hash ^= hash >> 33n;
  hash = (hash * 0xc4ceb9fe1a85ec53n) & mask64;
  hash ^= hash >> 33n;
  return hash;
}

const hex16 = (value: bigint) => value.toString(16).padStart(16, '0');

/** The span id for `key`: 16 hex digits, never all zero (an invalid id in W3C Trace Context). */
export function spanIdOf(key: string): string {
  const hash = hash64(key, 0n);
  return hex16(hash === 0n ? 1n : hash);
}

/**
 * The trace id of a root run nobody traced before it started: the 32 hex digits of its root thread id
 * (`thread_<32 hex>`), so anyone holding the root id can find the tree's trace. Another key: a hash.
 */
export function traceIdOf(key: string): string {
  const digits = /^thread_([0-9a-f]{32})$/.exec(key)?.[1];
  if (digits && !/^0+$/.test(digits)) return digits;
  const high = hash64(key, 0x9e3779b97f4a7c15n);
  return `${hex16(high === 0n ? 1n : high)}${hex16(hash64(key, 0x632be59bd9b4e019n))}`;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** The context a W3C `traceparent` value names, or undefined for anything malformed or all-zero. */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = traceparentPattern.exec(value.trim().toLowerCase());
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]! };
}

/** `context` as a W3C `traceparent` value (always sampled: agents-kit records every span it starts). */
export const formatTraceparent = (context: SpanContext): string =>
  `00-${context.traceId}-${context.spanId}-01`;
