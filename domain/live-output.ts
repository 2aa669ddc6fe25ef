import { z } from 'zod';
import { jsonBytes } from './bytes';
import { Capability } from './capability';
import { ConversationId } from './ids';

/**
 * Live output (SPEC S10.1): the text a model call is generating, on its way to watchers. It is not a
 * notification: nothing is acknowledged or kept past the next call; the finished text is durable in the
 * transcript and, for an answer, in the conversation's `message` notification (S5.2). The conversation
 * of the thread holds the current call's text, so a watcher that connects mid-call gets the text so far
 * and one that connects after it gets the whole text; the agent's own history never sees a delta.
 */

/** Characters of one call's text a conversation keeps (the tail, when a call writes more). */
export const maxLiveTextChars = 16 * 1024;
/**
 * JSON bytes of that text carried through continue-as-new (SPEC S3.10): the tail that fits. 16 K lone
 * surrogates would be 96 KiB as JSON, past the conversation's carry margin (conversation-carry-bound).
 */
export const maxLiveCarryBytes = 32 * 1024;
/** Characters one flush carries: a flush stays a small signal whatever the provider sends at once. */
export const maxLiveChunkChars = 8 * 1024;
/** The memo key a conversation keeps while someone watches: until when (epoch ms) it counts as watched. */
export const liveWatchedMemoKey = 'agentsKitLiveWatchedUntil';
/** How long one watch keeps a conversation counted as watched, and when the memo is pushed further. */
export const liveWatchWindowMs = 60_000;
export const liveWatchRenewMs = 30_000;

/** One model call of a thread, ordered: a later turn, step or attempt supersedes the current call. */
export const LiveCallId = z
  .object({
    turn: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    step: z.number().int().min(0).max(1_000_000),
    attempt: z.number().int().min(1).max(1_000_000),
  })
  .strict();
export type LiveCallId = z.infer<typeof LiveCallId>;

/** How a call's stream ended. */
export const LiveEnd = z.enum(['finished', 'interrupted', 'failed']);
export type LiveEnd = z.infer<typeof LiveEnd>;

/** Model activity → the thread's conversation: the call's text from `offset` (its characters so far). */
export const LiveChunk = z
  .object({
    from: Capability,
    call: LiveCallId,
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    text: z.string().max(maxLiveChunkChars),
    end: LiveEnd.optional(),
  })
  .strict();
export type LiveChunk = z.infer<typeof LiveChunk>;

/** Where a watcher is: the call it has seen and how much of its text, and whether it saw the end. */
export const LiveCursor = z
  .object({
    call: LiveCallId.optional(),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
    ended: z.boolean().default(false),
  })
  .strict();
export type LiveCursor = z.infer<typeof LiveCursor>;

/** Watcher → a thread's conversation: what came after the cursor, waiting up to `waitMs` for it. */
export const WatchOutputRequest = z
  .object({
    from: Capability.optional(),
    cursor: LiveCursor.default({ offset: 0, ended: false }),
    waitMs: z.number().int().min(0).max(60_000).optional(),
  })
  .strict();
export type WatchOutputRequest = z.input<typeof WatchOutputRequest>;

/**
 * What a watcher gets: the current call and its text from `offset` (the cursor's, or the start of what
 * is kept when the call is new to the watcher; `cut` characters before it were dropped), `length` its
 * text so far, `end` once it ended. `closed`: the conversation hands over (continues as new or
 * completes): poll again. `threadEnded`: the thread has ended, so this is the last of its output. No
 * call yet: `call` absent.
 */
export interface LiveOutputView {
  conversationId: string;
  call?: LiveCallId;
  offset: number;
  text: string;
  length: number;
  cut: number;
  end?: LiveEnd;
  closed?: boolean;
  threadEnded?: boolean;
}

/** What a conversation carries of live output through continue-as-new (bounded by maxLiveTextChars). */
export const LiveSnapshot = z
  .object({
    call: LiveCallId,
    base: z.number().int().min(0),
    text: z.string().max(maxLiveTextChars),
    end: LiveEnd.optional(),
  })
  .strict();
export type LiveSnapshot = z.infer<typeof LiveSnapshot>;

/** Where a model call streams to: its thread's conversation, with the thread's proof. */
export const LiveTarget = z
  .object({ conversationId: ConversationId, from: Capability, call: LiveCallId.omit({ attempt: true }) })
  .strict();
export type LiveTarget = z.infer<typeof LiveTarget>;

/** -1, 0, 1 as call `left` is older than, the same as, or newer than `right`. */
export function compareCalls(left: LiveCallId, right: LiveCallId): number {
  return Math.sign(left.turn - right.turn || left.step - right.step || left.attempt - right.attempt);
}

/** The current call's text as a conversation holds it (pure; the workflow registers the handlers). */
export class LiveOutput {
  /** `base`: characters dropped from the front; `text` the rest, so the call's length is base + text. */
  private current: LiveSnapshot | undefined;

  constructor(snapshot?: LiveSnapshot) {
    this.current = snapshot;
  }

  /** The current call, its text clipped to the tail within {@link maxLiveCarryBytes} of JSON. */
  snapshot(): LiveSnapshot | undefined {
    const current = this.current;
    if (!current || jsonBytes(current.text) <= maxLiveCarryBytes) return current && { ...current };
    let low = 0;
    let high = current.text.length;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      if (jsonBytes(current.text.slice(middle)) <= maxLiveCarryBytes) high = middle;
      else low = middle + 1;
    }
    return { ...current, base: current.base + low, text: current.text.slice(low) };
  }

  /**
   * Takes a chunk: a newer call starts over (from offset 0 only), the current one grows by what is new
   * in the chunk (a repeated flush overlaps; a chunk past the end leaves a gap and is refused). Returns
   * the call's length after it, so the sender resends from there. An older call changes nothing.
   */
  write(chunk: LiveChunk): number {
    const order = this.current ? compareCalls(chunk.call, this.current.call) : 1;
    if (order < 0) return 0;
    if (order > 0) {
      if (chunk.offset !== 0) return 0;
      this.current = { call: chunk.call, base: 0, text: '' };
    }
    const current = this.current!;
    const length = current.base + current.text.length;
    if (current.end || chunk.offset > length) return length;
    const fresh = chunk.text.slice(length - chunk.offset);
    let text = current.text + fresh;
    let base = current.base;
    if (text.length > maxLiveTextChars) {
      base += text.length - maxLiveTextChars;
      text = text.slice(text.length - maxLiveTextChars);
    }
    this.current = { call: current.call, base, text, ...(chunk.end ? { end: chunk.end } : {}) };
    return base + text.length;
  }

  /** Whether there is something after the cursor: a newer call, more text, or the end. */
  hasNewsFor(cursor: LiveCursor): boolean {
    const current = this.current;
    if (!current) return false;
    if (!cursor.call || compareCalls(current.call, cursor.call) !== 0) return true;
    return current.base + current.text.length > cursor.offset || (current.end !== undefined && !cursor.ended);
  }

  /** What comes after the cursor (the whole kept text of a call the watcher has not seen). */
  read(conversationId: string, cursor: LiveCursor): LiveOutputView {
    const current = this.current;
    if (!current) return { conversationId, offset: 0, text: '', length: 0, cut: 0 };
    const length = current.base + current.text.length;
    const same = cursor.call !== undefined && compareCalls(current.call, cursor.call) === 0;
    const offset = Math.min(length, Math.max(current.base, same ? cursor.offset : 0));
    return {
      conversationId,
      call: current.call,
      offset,
      text: current.text.slice(offset - current.base),
      length,
      cut: same ? Math.max(0, current.base - cursor.offset) : current.base,
      ...(current.end ? { end: current.end } : {}),
    };
  }
}
