import type { Client } from '@temporalio/client';
import { ErrorKind, KitError } from '../domain/errors';
import { modelTranscriptQuery } from '../domain/messages';
import { TranscriptEntry, transcriptBytes, type ModelCallInput } from '../domain/transcript';

/**
 * The transcripts this worker's model calls were sent, by key (workflows/transcript-sender.ts), so a
 * call that carries only the entries after the ones sent before gets the whole transcript back.
 * One transcript per thread (its latest key), and bounded in bytes: past `maxBytes` the least recently
 * used are forgotten (a forgotten one is read from its thread again).
 */
export class TranscriptCache {
  private readonly kept = new Map<string, { entries: TranscriptEntry[]; bytes: number }>();
  /** Each thread's latest key: a thread's calls extend one transcript, so its older ones are dropped. */
  private readonly latest = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  /**
   * The call's whole transcript: as sent, or the kept entries it extends and its own. A worker that does
   * not keep them all (restarted, or the thread's previous calls ran on other workers) asks the thread
   * with its `model-transcript` query; NotFound when the thread has moved on (a stale retry).
   */
  async whole(input: ModelCallInput, client: () => Client): Promise<TranscriptEntry[]> {
    const base = input.transcriptBase;
    if (!base) return input.transcript;
    if (base.from === 0) return this.keep(input.threadId, base.key, input.transcript);
    // Kept shorter: the thread's calls in between ran on other workers.
    const cached = this.kept.get(base.key)?.entries;
    const kept =
      cached && cached.length >= base.from ? cached : await this.read(input.threadId, base.key, client);
    if (kept.length < base.from)
      throw new KitError(
        ErrorKind.NotFound,
        `the transcript ${base.key} of ${input.threadId} has ${kept.length} entries, not the ${base.from} this call extends`,
      );
    return this.keep(input.threadId, base.key, [...kept.slice(0, base.from), ...input.transcript]);
  }

  /** How many transcripts are kept, and their bytes. */
  get size(): { transcripts: number; bytes: number } {
    return { transcripts: this.kept.size, bytes: this.bytes };
  }

  private async read(threadId: string, key: string, client: () => Client): Promise<TranscriptEntry[]> {
    const answer = await client().workflow.getHandle(threadId).query(modelTranscriptQuery, key);
    if (answer === null)
      throw new KitError(ErrorKind.NotFound, `${threadId} no longer has the transcript ${key} (it moved on)`);
    return TranscriptEntry.array().parse(answer);
  }

  private keep(threadId: string, key: string, entries: TranscriptEntry[]): TranscriptEntry[] {
    const previous = this.latest.get(threadId);
    if (previous !== undefined && previous !== key) this.forget(previous);
    this.latest.delete(threadId);
    this.latest.set(threadId, key);
    if (this.latest.size > 100_000) this.latest.delete(this.latest.keys().next().value!);
    this.forget(key);
    const bytes = transcriptBytes(entries);
    this.kept.set(key, { entries, bytes });
    this.bytes += bytes;
    for (const oldest of this.kept.keys()) {
      if (this.bytes <= this.maxBytes || oldest === key) break;
      this.forget(oldest);
    }
    return entries;
  }

  private forget(key: string): void {
    const gone = this.kept.get(key);
    if (!gone) return;
    this.kept.delete(key);
    this.bytes -= gone.bytes;
  }
}
