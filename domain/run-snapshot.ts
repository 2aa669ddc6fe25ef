import { z } from 'zod';
import { ControlRequest, OutboxItem, ShutdownReport, ThreadLoopState, WatchSnapshot } from './control';
import { ThreadId } from './ids';
import { AgentLimits, AgentThread, DelegationGrant, InterAgentMessage } from './schemas';

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
  })
  .strict();
export type ThreadRecord = z.infer<typeof ThreadRecord>;

/** Everything a root run must carry through continue-as-new (SPEC S3.1, S7.3). */
export const RunSnapshot = z
  .object({
    schemaVersion: z.literal(1),
    grant: DelegationGrant,
    records: z.array(ThreadRecord),
    /** Request id → admitted thread; a null thread is a tombstone left by reconcile for a request never seen. */
    requestIndex: z.record(
      z.string(),
      z.object({ fingerprint: z.string(), threadId: ThreadId.nullable() }).strict(),
    ),
    recipientSeq: z.record(z.string(), z.number().int().min(0)),
    /** Per recipient, the sequence number its turns have consumed through (for mailbox back-pressure). */
    consumedSeq: z.record(z.string(), z.number().int().min(0)).default({}),
    rootMailbox: z.array(InterAgentMessage),
    admissionOpen: z.boolean(),
    shutdown: ShutdownReport.optional(),
  })
  .strict();
export type RunSnapshot = z.infer<typeof RunSnapshot>;

/** JSON with sorted object keys, so equal requests have equal fingerprints whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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
  })
  .strict();
export type RootResume = z.infer<typeof RootResume>;
