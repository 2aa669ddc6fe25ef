import { z } from 'zod';
import { canonicalJson, jsonBytes, sha256Hex } from './bytes';
import { ErrorKind, KitError } from './errors';

/** How many answers a workflow remembers across continue-as-new. */
export const rememberedAnswers = 200;
/** How many the root run remembers: its input also carries the tree's registry. */
export const rootRememberedAnswers = 100;
/**
 * Longest id remembered (a Temporal update id, or an operation id); a longer one is not remembered (the
 * workflows key a longer update id by its hash: workflows/run-lifetime.ts `updateKey`).
 */
export const maxRememberedId = 200;
/**
 * Largest entry remembered (id, fingerprint and answer) in bytes of JSON, as it is carried; a larger
 * one is not remembered (its retry is applied again, which ids of spawn requests still de-duplicate).
 */
export const maxRememberedEntryBytes = 1_024;

/** An update or operation a workflow has applied: its id, a fingerprint of its input, and its answer. */
export const RecentAnswer = z
  .object({
    id: z.string().min(1).max(maxRememberedId),
    inputFingerprint: z.string().max(64),
    answer: z.unknown(),
  })
  .strict();
export type RecentAnswer = z.infer<typeof RecentAnswer>;
export const RecentAnswers = z.array(RecentAnswer).max(rememberedAnswers);

/**
 * The answers of the last {@link rememberedAnswers} updates (by update id) or operations (by operation
 * id) a workflow applied, carried through continue-as-new. Temporal recognises a retried update id only
 * within one run; a retry that lands on a later run finds its answer here and gets it back instead of
 * taking effect twice (SPEC S3.10). At most 200 × {@link maxRememberedEntryBytes} (+ commas) = ~205 KB.
 */
export class RecentAnswerLog {
  private readonly byId = new Map<string, RecentAnswer>();

  constructor(
    carried: readonly RecentAnswer[] = [],
    private readonly capacity = rememberedAnswers,
  ) {
    for (const entry of carried.slice(-capacity)) this.byId.set(entry.id, entry);
  }

  /**
   * The answer an earlier attempt got, or undefined when none is remembered. Conflict when the earlier
   * attempt had another input: an id names one request.
   */
  find(id: string | undefined, input: unknown): unknown {
    const entry = id === undefined ? undefined : this.byId.get(id);
    if (!entry) return undefined;
    if (entry.inputFingerprint !== sha256Hex(canonicalJson(input))) {
      throw new KitError(
        ErrorKind.Conflict,
        `${id} was applied before with another input: a retry must send the same request`,
        { id },
      );
    }
    return entry.answer;
  }

  /** Remembers an answer (not when the id or the answer is too large to carry); says whether it did. */
  remember(id: string | undefined, input: unknown, answer: unknown): boolean {
    if (id === undefined || id.length > maxRememberedId) return false;
    const entry: RecentAnswer = { id, inputFingerprint: sha256Hex(canonicalJson(input)), answer };
    if (jsonBytes(entry) > maxRememberedEntryBytes) return false;
    this.byId.delete(id);
    this.byId.set(id, entry);
    for (const oldest of this.byId.keys()) {
      if (this.byId.size <= this.capacity) break;
      this.byId.delete(oldest);
    }
    return true;
  }

  snapshot(): RecentAnswer[] {
    return [...this.byId.values()];
  }
}
