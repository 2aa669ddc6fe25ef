import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';

/** The kinds of failure a user can see (SPEC S2.2). Only `Timeout` and `Integration` are retryable. */
export const ErrorKind = {
  Timeout: 'Timeout',
  Integration: 'Integration',
  Conflict: 'Conflict',
  Closed: 'Closed',
  Unsupported: 'Unsupported',
  NotYetImplemented: 'NotYetImplemented',
  Protocol: 'Protocol',
  InvalidState: 'InvalidState',
  NotFound: 'NotFound',
  PermissionDenied: 'PermissionDenied',
  QuotaExceeded: 'QuotaExceeded',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

const errorKinds = new Set<string>(Object.values(ErrorKind));

export function isErrorKind(value: unknown): value is ErrorKind {
  return typeof value === 'string' && errorKinds.has(value);
}

/**
 * The brand every KitError carries. `Symbol.for` makes it the same symbol in every copy of agents-kit a
 * process loads (two versions in one node_modules tree, or a bundled and an installed copy), so
 * {@link KitError.is} recognises their errors where `instanceof` cannot.
 */
const kitErrorBrand: unique symbol = Symbol.for('agents-kit.KitError') as never;

/**
 * Every user-visible failure (SPEC S2.2): a kind, a message that says what was wrong, optional structured
 * details, and the original error as `cause`. `instanceof KitError` holds for errors this copy of the
 * package throws; `KitError.is(error)` holds for a KitError of any copy.
 *
 * @example
 * try { await controls.spawn({ task }); }
 * catch (error) { if (KitError.is(error) && error.kind === 'QuotaExceeded') backOff(); else throw error; }
 */
export class KitError extends Error {
  override readonly name = 'KitError';
  readonly [kitErrorBrand] = true;

  /** Whether `value` is a KitError of any copy of agents-kit (a brand check, not `instanceof`). */
  static is(value: unknown): value is KitError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[kitErrorBrand] === true
    );
  }

  /** False when an operation of a retryable kind must not run again (a tool call that may have run). */
  private readonly mayRetry: boolean;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown; retryable?: false },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.mayRetry = options?.retryable !== false;
  }

  /**
   * Whether trying the same operation again may succeed (SPEC S2.2): only `Timeout` and `Integration`
   * are, and not those made with `retryable: false` (a call that timed out after it was sent may have
   * taken effect).
   */
  get retryable(): boolean {
    return this.mayRetry && (this.kind === ErrorKind.Timeout || this.kind === ErrorKind.Integration);
  }

  /** The form a KitError takes across the Temporal boundary: an ApplicationFailure typed by kind (S2.3). */
  /** As a Temporal failure; `nextRetryDelayMs`: when to try again (a provider's Retry-After). */
  toFailure(nextRetryDelayMs?: number): ApplicationFailure {
    return ApplicationFailure.create({
      type: this.kind,
      message: this.message,
      details: this.details === undefined ? [] : [this.details],
      nonRetryable: !this.retryable,
      ...(this.cause instanceof Error ? { cause: this.cause } : {}),
      ...(nextRetryDelayMs === undefined ? {} : { nextRetryDelay: nextRetryDelayMs }),
    });
  }

  static protocol(message: string, details?: unknown): KitError {
    return new KitError(ErrorKind.Protocol, message, details);
  }
}

/**
 * Finds the KitError carried by a Temporal failure chain (workflow, update, child, activity failures
 * all wrap the original ApplicationFailure as `cause`). Returns undefined when none is there.
 */
export function kitErrorFromFailure(error: unknown): KitError | undefined {
  for (
    let current = error, hops = 0;
    current instanceof Error && hops < 10;
    current = current.cause, hops++
  ) {
    if (KitError.is(current)) return current;
    if (current instanceof ApplicationFailure && isErrorKind(current.type)) {
      return new KitError(current.type, current.message, current.details?.[0], { cause: error });
    }
  }
  return undefined;
}

/** Turns a zod failure into a Protocol KitError whose message names each offending field. */
export function protocolErrorFromZod(what: string, error: z.ZodError): KitError {
  const problems = error.issues.map((issue) => {
    // An issue with the value as a whole (wrong type, unknown keys) names no field of its own.
    return issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message;
  });
  return new KitError(ErrorKind.Protocol, `invalid ${what}: ${problems.join('; ')}`, {
    fields: error.issues.map((issue) => issue.path.map(String).join('.')),
  });
}

/** Parses `value` with `schema`, throwing a Protocol KitError that names `what` and the fields. */
export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Nothing where something is required: say so, rather than "expected object, received undefined".
  if (value === undefined)
    throw new KitError(ErrorKind.Protocol, `invalid ${what}: missing`, { fields: [''] });
  throw protocolErrorFromZod(what, result.error);
}

const AnyObject = z.looseObject({});

/** `value` itself when it is an object (not null, not an array); a Protocol KitError naming `what` otherwise. */
export function objectInput<Value>(value: Value, what: string): Value & object {
  if (Array.isArray(value)) throw KitError.protocol(`invalid ${what}: expected an object, got an array`);
  parseInput(AnyObject, value, what);
  return value as Value & object;
}
