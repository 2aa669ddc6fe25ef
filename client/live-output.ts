import type { ReadingClient } from './cancel';
import { watchOutputUpdate } from '../domain/conversation-messages';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { parseId, relatedId } from '../domain/ids';
import { Capability } from '../domain/capability';
import { LiveCursor, type LiveCallId, type LiveEnd } from '../domain/live-output';
import { conversationHandle } from './conversations';
import { abortable, abortSignalOption, withCancel } from './cancel';
import { executeUpdate, longPoll } from './updates';

/**
 * One step of a thread's live output (SPEC S10.1). `text`: what a model call generated after `offset`
 * (`started`: the first text seen of this call, whose first `cut` characters were no longer kept);
 * `end`: the call ended (`finished`, `interrupted`, `failed`). A retried call is a new call (its
 * `attempt` is higher) that starts over.
 */
export type LiveOutputEvent =
  | {
      type: 'text';
      threadId: string;
      call: LiveCallId;
      offset: number;
      text: string;
      started: boolean;
      cut: number;
    }
  | { type: 'end'; threadId: string; call: LiveCallId; end: LiveEnd; length: number };

/** Options of {@link watchOutput}. */
export interface WatchOutputOptions {
  /** The thread's capability or an ancestor's (the backend's root capability reads every thread). */
  capability: Capability;
  /** Stops watching: the iteration ends. */
  signal?: AbortSignal;
  /** Where to resume (what the last event said); the call's text so far by default. */
  cursor?: LiveCursor;
  /** Longest one server-side long-poll waits. */
  pollWaitMs?: number;
}

const transient: ReadonlySet<string> = new Set([ErrorKind.Timeout, ErrorKind.Integration]);
const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Watches what a thread's model calls generate, as they generate it (SPEC S10.1): yields the text of the
 * current call so far, then each batch as it arrives, until `signal` aborts or the thread has ended
 * (after its last call's text). Watching is what makes a
 * model call stream (a call nobody watches sends nothing); the finished answer is also the thread's
 * durable `message` notification (S5.2). Not exclusive: any number of watchers may watch a thread.
 *
 * @example
 * for await (const event of watchOutput(client, thread.id, { capability: service.rootCapability })) {
 *   if (event.type === 'text') process.stdout.write(event.text);
 * }
 */
export async function* watchOutput(
  client: ReadingClient,
  threadId: string,
  options: WatchOutputOptions,
): AsyncGenerator<LiveOutputEvent> {
  const thread = parseId('thread', threadId, 'threadId');
  objectInput(options, 'watchOutput options');
  const signal = abortSignalOption(options.signal, 'watchOutput');
  parseInput(Capability, options.capability, 'capability');
  if (options.cursor !== undefined) parseInput(LiveCursor, options.cursor, 'cursor');
  const handle = conversationHandle(client, relatedId('conversation', thread));
  let cursor: LiveCursor = options.cursor ?? { offset: 0, ended: false };
  let failures = 0;
  while (!signal?.aborted) {
    const request = {
      from: options.capability,
      cursor,
      ...(options.pollWaitMs === undefined ? {} : { waitMs: options.pollWaitMs }),
    };
    let view;
    try {
      const poll = () =>
        longPoll(() => executeUpdate(handle, watchOutputUpdate, [request], `watch the output of ${thread}`));
      // The poll's RPC is cancelled with the watch, so none is left running when the caller closes the
      // connection (a retry of it would then throw from a timer). Through a signal of its own: the
      // connection adds a listener per call to the signal it is given and never removes it.
      view = await (signal ? abortable(withCancel(client, signal, poll), signal, watchAborted) : poll());
      failures = 0;
    } catch (error) {
      if (signal?.aborted) return;
      const kitError = error instanceof KitError ? error : undefined;
      // A conversation not started yet (a thread spawning) or continuing as new: look again shortly.
      const retry =
        kitError &&
        (transient.has(kitError.kind) ||
          kitError.kind === ErrorKind.NotFound ||
          kitError.kind === ErrorKind.InvalidState);
      if (!retry || ++failures > 30) throw error;
      await pause(Math.min(2_000, 100 * failures));
      continue;
    }
    if (view.call) {
      const started = !cursor.call || !sameCall(cursor.call, view.call);
      if (view.text.length > 0 || started) {
        yield {
          type: 'text',
          threadId: thread,
          call: view.call,
          offset: view.offset,
          text: view.text,
          started,
          cut: view.cut,
        };
      }
      if (view.end && (started || !cursor.ended)) {
        yield { type: 'end', threadId: thread, call: view.call, end: view.end, length: view.length };
      }
      cursor = { call: view.call, offset: view.length, ended: view.end !== undefined };
    }
    // The thread has ended: that was the last of its output.
    if (view.threadEnded) return;
    if (view.closed) await pause(50);
  }
}

const sameCall = (left: LiveCallId, right: LiveCallId) =>
  left.turn === right.turn && left.step === right.step && left.attempt === right.attempt;

const watchAborted = () => new KitError(ErrorKind.Timeout, 'watch aborted');
