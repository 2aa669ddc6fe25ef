import type { TranscriptEntry, TranscriptBase } from '../domain/transcript';

/** What a model call carries of the transcript: all of it, or what follows what its worker keeps. */
export interface SentTranscript {
  transcript: TranscriptEntry[];
  transcriptBase?: TranscriptBase;
}

/**
 * A thread's transcript as its model calls carry it (the `transcriptDelta` feature, workflows/patches.ts).
 * The model activity's worker keeps each transcript it was sent under a key (activities/transcript-cache.ts);
 * a call whose transcript extends the one sent last carries only the new entries and the key with the
 * count it extends. A transcript that does not extend it (a new turn read from memory, a trim that dropped
 * entries) is sent whole under a new key. The key is this run's id and a counter, so a replay draws the
 * same keys and nothing from the workflow's random stream.
 *
 * A worker without the key (restarted, or another worker took the call) reads the entries through the
 * thread's `model-transcript` query, which answers from {@link lookup}.
 */
export class TranscriptSender {
  private key = '';
  private sent: readonly TranscriptEntry[] = [];
  private count = 0;

  constructor(private readonly runId: () => string) {}

  send(transcript: TranscriptEntry[]): SentTranscript {
    const from = this.sent.length;
    const extends_ =
      from > 0 && transcript.length >= from && this.sent.every((entry, index) => transcript[index] === entry);
    this.sent = transcript;
    if (extends_) return { transcript: transcript.slice(from), transcriptBase: { key: this.key, from } };
    this.key = `${this.runId()}/${++this.count}`;
    return { transcript, transcriptBase: { key: this.key, from: 0 } };
  }

  /** The transcript sent last under `key`, or null when the thread has moved on to another key. */
  lookup(key: unknown): TranscriptEntry[] | null {
    return typeof key === 'string' && key === this.key && this.sent.length > 0 ? [...this.sent] : null;
  }
}
