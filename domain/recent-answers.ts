import { z } from 'zod';
import { canonicalJson, sha256Hex } from './bytes';
import { ErrorKind, KitError } from './errors';

/** How many answers a workflow remembers across continue-as-new. */
export const rememberedAnswers = 200;
/** Longest id remembered (a Temporal update id, or an operation id); a longer one is not remembered. */
const maxRememberedId = 200;
/** Largest answer remembered, in characters of JSON; a larger one is not remembered. */
const maxRememberedAnswer = 800;

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
 * taking effect twice (SPEC S3.10). At most ~220 KB: 200 × (200-character id + 64 + 800, and JSON around them).
 */
export class RecentAnswerLog {
  private readonly byId = new Map<string, RecentAnswer>();

  constructor(carried: readonly RecentAnswer[] = []) {
    for (const entry of carried) this.byId.set(entry.id, entry);
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

  /** Remembers an answer (not when the id or the answer is too large to carry). */
  remember(id: string | undefined, input: unknown, answer: unknown): void {
    if (id === undefined || id.length > maxRememberedId) return;
    if ((JSON.stringify(answer) ?? '').length > maxRememberedAnswer) return;
    this.byId.delete(id);
    this.byId.set(id, { id, inputFingerprint: sha256Hex(canonicalJson(input)), answer });
    for (const oldest of this.byId.keys()) {
      if (this.byId.size <= rememberedAnswers) break;
      this.byId.delete(oldest);
    }
  }

  snapshot(): RecentAnswer[] {
    return [...this.byId.values()];
  }
}
