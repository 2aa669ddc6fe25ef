import { z } from 'zod';
import { fingerprint } from './bytes';
import { ErrorKind, KitError } from './errors';
import { InterAgentMessage } from './schemas';

/** How many sendMessage updates a root run remembers across continue-as-new (~300 bytes each). */
export const rememberedSends = 200;

/** A sendMessage update the root has applied: its update id and the message it made, without content. */
export const RecentSend = z
  .object({
    updateId: z.string().min(1).max(1_000),
    message: InterAgentMessage.omit({ content: true }).strict(),
    contentFingerprint: z.string().max(64),
  })
  .strict();
export type RecentSend = z.infer<typeof RecentSend>;

/**
 * The last {@link rememberedSends} sendMessage updates of a root run, carried through continue-as-new.
 * Temporal recognises a retried update id only within one run; a client retry that lands on the next
 * run finds its message here and gets it back instead of sending it twice (SPEC S3.10). The content is
 * not kept (it can be large): the retry carries it, and its fingerprint must match.
 */
export class RecentSends {
  private readonly byUpdateId = new Map<string, RecentSend>();

  constructor(carried: readonly RecentSend[] = []) {
    for (const entry of carried) this.byUpdateId.set(entry.updateId, entry);
  }

  /** The message an earlier attempt of this update made, or undefined if none is remembered. */
  find(updateId: string, content: string): InterAgentMessage | undefined {
    const entry = this.byUpdateId.get(updateId);
    if (!entry) return undefined;
    if (entry.contentFingerprint !== fingerprint(content)) {
      throw new KitError(
        ErrorKind.Conflict,
        `update ${updateId} was applied before with other content: a retry must send the same message`,
        { updateId, messageId: entry.message.id },
      );
    }
    return { ...entry.message, content };
  }

  remember(updateId: string, message: InterAgentMessage): void {
    const { content, ...rest } = message;
    this.byUpdateId.set(updateId, { updateId, message: rest, contentFingerprint: fingerprint(content) });
    for (const oldest of this.byUpdateId.keys()) {
      if (this.byUpdateId.size <= rememberedSends) break;
      this.byUpdateId.delete(oldest);
    }
  }

  snapshot(): RecentSend[] {
    return [...this.byUpdateId.values()];
  }
}
