import { patched, setHandler, upsertMemo, workflowInfo } from '@temporalio/workflow';
import { liveOutputSignal, watchOutputUpdate } from '../domain/conversation-messages';
import {
  LiveChunk,
  LiveOutput,
  liveWatchedMemoKey,
  liveWatchRenewMs,
  liveWatchWindowMs,
  WatchOutputRequest,
  type LiveOutputView,
  type LiveSnapshot,
} from '../domain/live-output';
import { ErrorKind, KitError, parseInput } from '../domain/errors';
import { guarded } from './failures';
import { KeptTimer } from './kept-timer';
import { patches } from './patches';
import type { PollSlots } from './poll-slots';
import type { RunLifetime } from './run-lifetime';
import { dropReasonOf, signalDropped } from './workflow-metrics';

/** What the conversation lends its live output: who owns it, its checks, its poll slots and lifetime. */
export interface LiveOutputHost {
  conversationId: string;
  /** What the run before this one carried. */
  snapshot: LiveSnapshot | undefined;
  /** The thread the conversation belongs to (none yet: a receiver started it before its thread). */
  ownerThreadId: () => string | undefined;
  /** Throws PermissionDenied unless `from` proves the owner or a descendant (publishing's check). */
  checkSender: (from: unknown, what: string, workflowOnly?: boolean) => void;
  /** Throws PermissionDenied unless `from` proves the owner or an ancestor (reading's check). */
  checkReader: (from: unknown, what: string) => void;
  slots: PollSlots;
  lifetime: RunLifetime;
  /** The run is handing over (continuing as new or completing): waiting watchers answer at once. */
  handingOver: () => boolean;
  /** The thread's end has arrived: nothing more streams here. */
  ownerEnded: () => boolean;
  /** Longest a watch waits server-side unless it asks for less. */
  waitMs: number;
}

/**
 * Registers a thread conversation's live output (SPEC S10.1): the `live-output` signal its thread's model
 * activity sends (only that thread, proven; total: bad input is logged and changes nothing) and the
 * `watch-output` long-poll. A watch marks the conversation watched in its memo, which the model activity
 * reads with a describe (not a billable action), so a call nobody watches sends nothing.
 *
 * Why not `@temporalio/workflow-streams`: its publish signal takes entries from any client (SPEC S3.9
 * wants the sender proven), its log grows until the application truncates it and is carried through
 * continue-as-new (S3.10), and it streams whether anyone reads or not. Here a conversation keeps only
 * the current call's text, bounded, and a flush is sent only while someone watches.
 */
export function registerLiveOutput(host: LiveOutputHost): LiveOutput & { threadEnded(): void } {
  const live = new LiveOutput(host.snapshot);
  const timer = new KeptTimer();
  // Watches waiting now, and whether the thread's end has woken them (SPEC S10.1).
  let waiting = 0;
  let endWoke = false;
  let watchedUntil = Number(workflowInfo().memo?.[liveWatchedMemoKey] ?? 0) || 0;
  const markWatched = () => {
    const now = Date.now();
    if (watchedUntil - now >= liveWatchRenewMs) return;
    watchedUntil = now + liveWatchWindowMs;
    upsertMemo({ [liveWatchedMemoKey]: watchedUntil });
  };

  setHandler(liveOutputSignal, (raw: LiveChunk) => {
    try {
      const chunk = parseInput(LiveChunk, raw, 'live-output');
      host.checkSender(chunk.from, 'live-output', true);
      if (chunk.from.threadId !== host.ownerThreadId())
        throw new KitError(ErrorKind.PermissionDenied, 'live-output: only the conversation’s own thread may');
      live.write(chunk);
    } catch (error) {
      signalDropped(liveOutputSignal.name, dropReasonOf(error), 'live output dropped', {
        conversationId: host.conversationId,
        error: String(error),
      });
    }
  });

  setHandler(
    watchOutputUpdate,
    guarded((raw: WatchOutputRequest) =>
      host.slots.hold(async (): Promise<LiveOutputView> => {
        host.lifetime.count();
        const request = parseInput(WatchOutputRequest, raw, 'watch-output');
        markWatched();
        const ready = () => host.handingOver() || live.hasNewsFor(request.cursor) || endWoke;
        const waitMs = Math.min(request.waitMs ?? host.waitMs, host.waitMs);
        const ended = host.ownerEnded() && patched(patches.watchEndsWithThread);
        if (!ended && !ready() && waitMs > 0) {
          waiting++;
          await timer.waitUntil(Date.now() + waitMs, ready).finally(() => waiting--);
        }
        const view: LiveOutputView = live.read(host.conversationId, request.cursor);
        if (ended || endWoke) view.threadEnded = true;
        return host.handingOver() ? { ...view, closed: true } : view;
      }),
    ),
    {
      validator: guarded((raw: WatchOutputRequest) => {
        const request = parseInput(WatchOutputRequest, raw, 'watch-output');
        if (!host.ownerThreadId())
          throw new KitError(
            ErrorKind.InvalidState,
            `watch-output: conversation ${host.conversationId} has no thread yet: nothing streams to it`,
          );
        host.checkReader(request.from, 'watch-output');
        host.slots.check('watch-output');
      }),
    },
  );
  return Object.assign(live, {
    /** The thread's end has arrived: watches waiting now answer at once, saying so. */
    threadEnded(): void {
      if (waiting > 0 && !endWoke && patched(patches.watchWakesAtThreadEnd)) endWoke = true;
    },
  });
}
