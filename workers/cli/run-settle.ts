import type { ThreadService } from '../../client/thread-service';
import type { ConversationSummary } from '../../domain/conversation-schemas';
import { ErrorKind, KitError } from '../../domain/errors';
import { isTerminal, type AgentThread } from '../../domain/schemas';
import { latestResult } from './format';
import { progressTicker, type CliOutput } from './io';

/** How far the root conversation's stream has got, as `run` sees it. */
export interface StreamProgress {
  /** The seq of the last item printed (and, for an interaction, answered). */
  handledThrough: number;
  /** The stream stopped (an error was reported): it can no longer catch up. */
  ended: boolean;
}

/** What `run` waits on, and how it reads the run and its root conversation. */
export interface SettleOptions {
  output: CliOutput;
  service: ThreadService;
  conversation: () => Promise<ConversationSummary>;
  stream: StreamProgress;
  taskQueue: string;
  timeoutMs: number;
  stopped: () => boolean;
  pollMs?: number;
  /** Hears every listing of the tree (the live printer follows each thread it names). */
  onThreads?: (threads: readonly AgentThread[]) => void;
}

/** The tree when `run` stops waiting: the root (its first turn ended) and every thread. */
export interface SettledRun {
  root: AgentThread;
  threads: AgentThread[];
}

/** `/root/researcher running (turns 0/1)` progress lines for threads whose state changed since the last poll. */
function reportChanges(output: CliOutput, threads: AgentThread[], seen: Map<string, string>): void {
  for (const thread of threads) {
    const key = `${thread.status}/${thread.turnsStarted}/${thread.turnsCompleted}`;
    if (seen.get(thread.id) === key) continue;
    seen.set(thread.id, key);
    const result = thread.turnsCompleted > 0 ? ` → ${latestResult(thread)}` : '';
    output.note(
      `${thread.path} ${thread.status} (turns ${thread.turnsCompleted}/${thread.turnsStarted})${result}`,
    );
  }
}

/** What the run is still waiting for, in a few words, or undefined when it is at rest. */
function waitingFor(
  root: AgentThread | undefined,
  threads: AgentThread[],
  conversation: ConversationSummary,
  stream: StreamProgress,
): string | undefined {
  if (!root) return "the root's first turn (starting)";
  if (!root.firstTurn && !isTerminal(root.status)) return `the root's first turn (${root.status})`;
  if (conversation.pendingInteractions > 0) {
    const count = conversation.pendingInteractions;
    return `${count} pending interaction${count === 1 ? '' : 's'} to be answered`;
  }
  const busy = threads.filter((thread) => thread.status !== 'idle' && !isTerminal(thread.status));
  if (busy.length > 0) return `${busy.map((thread) => thread.path).join(', ')} to finish`;
  if (!stream.ended && stream.handledThrough < conversation.lastSeq) return 'the root conversation';
  return undefined;
}

/**
 * Polls until the run is at rest: the root's first turn has ended, every thread of the tree is idle or
 * terminal, no interaction of the tree is pending (each is mirrored into the root conversation, SPEC
 * S5.9) and the stream has shown the conversation up to its last item; seen twice in a row, so a status
 * published just after a thread went idle is shown too. Prints each thread's changes meanwhile.
 */
export async function untilSettled(options: SettleOptions): Promise<SettledRun> {
  const { output, service, stream } = options;
  const seen = new Map<string, string>();
  const started = Date.now();
  let hinted = false;
  let waiting: string | undefined = "the root's first turn (starting)";
  let restingAt: number | undefined;
  const stopTicker = progressTicker(output, () => waiting ?? 'the run to settle');
  try {
    for (;;) {
      const threads = await service.rootControls().listThreads();
      options.onThreads?.(threads);
      const conversation = await options.conversation();
      reportChanges(output, threads, seen);
      const root = threads.find((thread) => thread.id === service.rootThreadId);
      waiting = waitingFor(root, threads, conversation, stream);
      if (waiting === undefined && root) {
        if (restingAt === conversation.lastSeq) return { root, threads };
        restingAt = conversation.lastSeq;
      } else restingAt = undefined;
      if (!hinted && root?.status === 'pending' && Date.now() - started > 10_000) {
        hinted = true;
        output.note(
          `the root has not started: is a worker polling task queue ${options.taskQueue}? (agents-kit worker, or agents-kit dev)`,
        );
      }
      if (options.stopped()) throw new KitError(ErrorKind.Closed, 'interrupted by the user');
      if (Date.now() - started > options.timeoutMs) {
        throw new KitError(
          ErrorKind.Timeout,
          `still waiting for ${waiting ?? 'the run to settle'} after ${options.timeoutMs} ms (--timeout); the run is still there: agents-kit tree ${service.rootThreadId}, agents-kit shutdown ${service.rootThreadId}`,
        );
      }
      await new Promise((done) => setTimeout(done, options.pollMs ?? 500));
    }
  } finally {
    stopTicker();
  }
}
