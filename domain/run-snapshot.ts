import { z } from 'zod';
import { UsageLedger } from './usage';
import { canonicalJson, jsonBytes, sha256Hex } from './bytes';
import { clipNote } from './carry-bounds';
import { ControlRequest, OutboxItem, ShutdownReport, ThreadLoopState, WatchSnapshot } from './control';
import { RequestId, ThreadId } from './ids';
import { maxRememberedResolutions, RememberedResolution } from './conversation-schemas';
import { RecentAnswers } from './recent-answers';
import { MailboxSnapshot } from './mailbox';
import { AgentLimits, AgentThread, DelegationGrant, type TurnOutcome } from './schemas';

/** What the host keeps per thread beyond its public shape: effective limits and subtree counters. */
export const ThreadRecord = z
  .object({
    thread: AgentThread,
    /** Limits for this thread's subtree; maxDepth is an absolute depth. */
    limits: AgentLimits,
    /** Live (non-terminal) descendants, lifetime descendants, and tokens used by the subtree (self included). */
    subtreeLive: z.number().int().min(0),
    subtreeTotal: z.number().int().min(0),
    subtreeTokens: z.number().int().min(0),
    /** Canonical form of the admitted spawn request, for idempotency and reconcile. */
    fingerprint: z.string(),
    /** The thread's workflow confirmed it ended (or it never started): nothing of it runs any more. */
    ended: z.boolean().default(false),
    /** Tokens set aside for this thread to spend (SPEC S6.4) and not reported spent yet: counted as used. */
    held: z.number().int().min(0).default(0),
    /** SPEC S11.3: as `subtreeTokens` and `held`, in micro-dollars; only in trees with a budget in dollars. */
    subtreeMicroUsd: z.number().int().min(0).optional(),
    heldMicroUsd: z.number().int().min(0).optional(),
    /** The spawn's request id, when it had one (idempotency and reconcile, SPEC S3.6). */
    requestId: RequestId.optional(),
  })
  .strict();
export type ThreadRecord = z.infer<typeof ThreadRecord>;

/** Everything a root run must carry through continue-as-new (SPEC S3.1, S7.3). */
export const RunSnapshot = z
  .object({
    schemaVersion: z.literal(1),
    grant: DelegationGrant,
    records: z.array(ThreadRecord),
    /**
     * Tombstones: request ids reconcile found never committed (threadId null), at most
     * {@link maxTombstones}. Admitted requests are known from their records' `requestId`.
     */
    requestIndex: z.record(
      z.string(),
      z.object({ fingerprint: z.string(), threadId: ThreadId.nullable() }).strict(),
    ),
    /** The root's own mailbox (SPEC S4.3); every other thread's is its workflow's. */
    rootMailbox: MailboxSnapshot,
    admissionOpen: z.boolean(),
    shutdown: ShutdownReport.optional(),
    /** SPEC S11.3: the tree's usage ledger (from its threads' reports) and the root thread's own. */
    usage: z.object({ tree: UsageLedger, root: UsageLedger }).strict().optional(),
  })
  .strict();
export type RunSnapshot = z.infer<typeof RunSnapshot>;

export { canonicalJson };

/**
 * A spawn request's fingerprint, for idempotency and reconcile: the SHA-256 of its canonical JSON, so a
 * registry entry stays small whatever the task and instructions (runs before stored the JSON itself).
 */
export const fingerprintOf = (value: unknown): string => `sha256:${sha256Hex(canonicalJson(value))}`;

/** Whether a stored fingerprint (digest, or the JSON runs before stored) is the fingerprint of `value`. */
export const sameFingerprint = (stored: string, value: unknown): boolean =>
  stored.startsWith('sha256:') ? stored === fingerprintOf(value) : stored === canonicalJson(value);

/**
 * What a root run's registry may take of its continue-as-new input, in bytes of JSON, counting each
 * record as {@link fitRegistry} can clip it at most (SPEC S3.10): the rest of the root's input takes
 * the remainder of `carriedInputBudgetBytes` (computed in `continue-as-new-input.test.ts`). A registry
 * of 1,000 threads with short names fits.
 */
export const registryBudgetBytes = 900_000;

/** Requests reconcile may find never committed, each remembered as a tombstone (SPEC S3.6). */
export const maxTombstones = 256;

/**
 * What a root run carries of requests and side effects into its next run (queued control requests and
 * the outbox), in bytes of JSON; past it they are handled before the run continues as new.
 */
export const carryBudgetBytes = 96 * 1024;

const clipped = /… \[\d+ more characters clipped in [^\]]*\]$/;
/** A text clipped before to at most `limit` characters (clipping is idempotent). */
const alreadyClipped = (text: string, limit: number) =>
  clipped.test(text) && text.lastIndexOf('… [') <= limit;

/**
 * The first `limit` characters of a text and a note on what was cut and where the full text is (the
 * thread's conversation); `what` says where it was cut. Unchanged when it fits.
 */
export function clipText(text: string, limit: number, what = "the root run's registry"): string {
  if (text.length <= limit || alreadyClipped(text, limit)) return text;
  return `${text.slice(0, limit)}${clipNote(what)(text.length - limit)}`;
}

const clipOutcome = (outcome: TurnOutcome | undefined, limit: number): TurnOutcome | undefined =>
  outcome && {
    ...outcome,
    ...(outcome.result === undefined ? {} : { result: clipText(outcome.result, limit) }),
    ...(outcome.error
      ? { error: { ...outcome.error, message: clipText(outcome.error.message, limit) } }
      : {}),
  };

/**
 * A record with its task and turn results clipped to `limit` characters (never the task below 200), or
 * at limit 0 left out altogether (the thread's own workflow and conversation keep them): the record at
 * its smallest, what admission counts (SPEC S3.10).
 */
export function clipRecord(record: ThreadRecord, limit: number): ThreadRecord {
  const { latestTurn, firstTurn, ...thread } = record.thread;
  if (limit === 0) return { ...record, thread: { ...thread, task: '' } };
  const latest = clipOutcome(latestTurn, limit);
  const first = clipOutcome(firstTurn, limit);
  return {
    ...record,
    thread: {
      ...thread,
      task: clipText(thread.task, Math.max(limit, 200)),
      ...(latest ? { latestTurn: latest } : {}),
      ...(first ? { firstTurn: first } : {}),
    },
  };
}

/**
 * The snapshot as it may travel: unchanged while its registry fits `registryBudgetBytes`; otherwise the
 * registry's task texts and turn results are clipped, less and less generously, until it fits. Nothing
 * else is touched: admission refuses spawns whose records would not fit even fully clipped.
 */
export function fitRegistry(snapshot: RunSnapshot, budget = registryBudgetBytes): RunSnapshot {
  if (jsonBytes(snapshot.records) <= budget) return snapshot;
  for (const limit of [16_000, 4_000, 1_000, 200, 0]) {
    const records = snapshot.records.map((record) => clipRecord(record, limit));
    if (jsonBytes(records) <= budget || limit === 0) return { ...snapshot, records };
  }
  return snapshot;
}

/** What a root run carries into its next run on continue-as-new. */
export const RootResume = z
  .object({
    schemaVersion: z.literal(1),
    run: RunSnapshot,
    loop: ThreadLoopState,
    watch: WatchSnapshot,
    queued: z.array(ControlRequest),
    outbox: z.array(OutboxItem),
    /** Updates and control requests applied lately, so a retry on this run takes effect once. */
    recent: RecentAnswers,
    /** Interactions of the root resolved lately, so a repeated resolve gets the same resolution. */
    resolutions: z.array(RememberedResolution).max(maxRememberedResolutions),
    /** Control requests the root run has sent so far (their ids stay unique across runs). */
    operations: z.number().int().min(0),
  })
  .strict();
export type RootResume = z.infer<typeof RootResume>;
