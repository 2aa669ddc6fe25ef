import type { Client } from '@temporalio/client';
import { liveOutputSignal } from '../domain/conversation-messages';
import {
  liveWatchedMemoKey,
  maxLiveChunkChars,
  type LiveChunk,
  type LiveEnd,
  type LiveTarget,
} from '../domain/live-output';

/** How a sink paces itself. */
export interface LiveSinkTiming {
  /** Least time between two flushes while watched (the first delta leaves at once). */
  flushMs: number;
  /** How often a streaming call looks again whether its conversation is watched. */
  recheckMs: number;
  /** A reading younger than this is taken as it is when a call starts and ends, without a new look. */
  freshMs: number;
  /** Longest the final flush may hold the model call's end. */
  finishMs: number;
}

export const defaultLiveSinkTiming: LiveSinkTiming = {
  flushMs: 50,
  recheckMs: 1_000,
  freshMs: 250,
  finishMs: 2_000,
};

/**
 * What the sinks of this process last saw of each conversation's watch: until when it is watched and
 * when that was read. Bounded: past `limit` conversations the oldest reading is forgotten (a forgotten
 * conversation is only looked at again).
 */
export class WatchState {
  private readonly readings = new Map<string, { watchedUntil: number; readAt: number }>();

  constructor(private readonly limit = 10_000) {}

  saw(conversationId: string, watchedUntil: number, now = Date.now()): void {
    this.readings.delete(conversationId);
    this.readings.set(conversationId, { watchedUntil, readAt: now });
    if (this.readings.size > this.limit) this.readings.delete(this.readings.keys().next().value!);
  }

  /** When the conversation was last read, if it was. */
  readAt(conversationId: string): number | undefined {
    return this.readings.get(conversationId)?.readAt;
  }

  /** Whether a reading says the conversation is watched now. */
  watchedNow(conversationId: string, now = Date.now()): boolean {
    return (this.readings.get(conversationId)?.watchedUntil ?? 0) > now;
  }

  /** Whether it was read, unwatched, less than `withinMs` ago. */
  unwatchedWithin(conversationId: string, withinMs: number, now = Date.now()): boolean {
    const reading = this.readings.get(conversationId);
    return reading !== undefined && reading.watchedUntil <= now && now - reading.readAt < withinMs;
  }
}

const watchState = new WatchState();

/**
 * Streams one model call's text to its thread's conversation (SPEC S10.1), batched: the first delta at
 * once, then at most one `live-output` signal per `flushMs`, each carrying everything since the last.
 *
 * Only while someone watches: the conversation keeps a "watched until" memo that a watch sets, and the
 * sink reads it with a describe (a read, not a billable action) when the call starts and every
 * `recheckMs` after, and once more at its end, unless this process read it less than `freshMs` ago:
 * a thread calling its model many times a second makes about four describes a second, not two per
 * call (they were ~1 ms of each call in the agent-step bench, and load on the server), and a watcher
 * is seen by the next call that starts `freshMs` after it came. A call nobody watches sends nothing; a
 * watcher that arrives mid-call is seen within `recheckMs` and gets the text so far with the next
 * flush, or the whole text when the call ends. Each flush says where its text starts, so a repeated
 * or lost one heals with the next. Best effort: a failed flush is retried with the next and never
 * fails the model call.
 *
 * What each describe saw is kept per conversation for the worker process (`watchState`), so the look
 * is off the step's path: a conversation seen watched until T counts as watched at once (the memo says
 * so until T), and a call whose conversation was seen unwatched less than `recheckMs` ago does not wait
 * at its end for the look it started: if that look finds a watcher after all, the text follows the call,
 * with its end. Waiting for it cost every model call a describe round trip (2.8 ms p50, 5.3 ms mean in
 * the agent-step bench).
 */
export class LiveOutputSink {
  private text = '';
  private sent = 0;
  private ended = false;
  private watched = false;
  private checkedAt = -Infinity;
  private checking: Promise<void> | undefined;
  private lastFlushAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly target: LiveTarget,
    private readonly attempt: number,
    private readonly timing: LiveSinkTiming = defaultLiveSinkTiming,
  ) {
    this.watched = watchState.watchedNow(target.conversationId);
    // A fresh reading is taken as it is: no look per call of a busy thread.
    const readAt = watchState.readAt(target.conversationId);
    if (readAt !== undefined && Date.now() - readAt < timing.freshMs) this.checkedAt = readAt;
    else this.check();
  }

  /** A delta of the call's text, as the provider emitted it. */
  push(delta: string): void {
    this.text += delta;
    if (Date.now() - this.checkedAt >= this.timing.recheckMs) this.check();
    this.schedule();
  }

  /**
   * The call is over: what is left (and the end) is flushed if someone watches, within `finishMs`.
   * Never rejects.
   */
  async finish(end: LiveEnd): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    // A watcher that came after the last look still gets the call's text, with its end, unless that
    // look is fresh (a watcher that comes later sees the durable reply: SPEC S10.1).
    const readAt = watchState.readAt(this.target.conversationId) ?? -Infinity;
    if (!this.watched && !this.checking && Date.now() - readAt >= this.timing.freshMs) this.check();
    const draining = this.drain(end, Date.now() + this.timing.finishMs);
    if (
      this.checking &&
      !this.watched &&
      watchState.unwatchedWithin(this.target.conversationId, this.timing.recheckMs)
    )
      return void draining;
    await draining;
  }

  /** Waits for the look in flight, then flushes the rest with the end while watched, until `deadline`. */
  private async drain(end: LiveEnd, deadline: number): Promise<void> {
    await this.checking;
    while (this.watched && !this.ended && Date.now() < deadline) {
      await this.flushing;
      if (!(await this.flush(end))) await new Promise((done) => setTimeout(done, this.timing.flushMs));
    }
  }

  /** Reads whether the conversation is watched (one describe at a time). */
  private check(): void {
    if (this.checking) return;
    this.checkedAt = Date.now();
    this.checking = this.client.workflow
      .getHandle(this.target.conversationId)
      .describe()
      .then(
        (description) => {
          const watchedUntil = Number(description.memo?.[liveWatchedMemoKey] ?? 0) || 0;
          watchState.saw(this.target.conversationId, watchedUntil);
          this.watched = watchedUntil > Date.now();
        },
        () => undefined,
      )
      .finally(() => {
        this.checking = undefined;
        this.schedule();
      });
  }

  private schedule(): void {
    if (this.closed || !this.watched || this.timer || this.flushing || this.sent >= this.text.length) return;
    const wait = Math.max(0, this.lastFlushAt + this.timing.flushMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, wait);
  }

  /** Sends the text not sent yet (up to one chunk), with the end when it is the last of it. */
  private flush(end?: LiveEnd): Promise<boolean> {
    const offset = this.sent;
    const text = this.text.slice(offset, offset + maxLiveChunkChars);
    const last = offset + text.length >= this.text.length;
    const chunk: LiveChunk = {
      from: this.target.from,
      call: { ...this.target.call, attempt: this.attempt },
      offset,
      text,
      ...(end && last ? { end } : {}),
    };
    this.lastFlushAt = Date.now();
    const flushing = this.client.workflow
      .getHandle(this.target.conversationId)
      .signal(liveOutputSignal, chunk)
      .then(
        () => {
          this.sent = Math.max(this.sent, offset + text.length);
          if (chunk.end) this.ended = true;
          return true;
        },
        () => false,
      )
      .finally(() => {
        if (this.flushing === flushing) this.flushing = undefined;
        this.schedule();
      });
    this.flushing = flushing;
    return flushing;
  }
}
