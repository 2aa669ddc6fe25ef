import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { setTimeout as delay } from 'node:timers/promises';
import type { LiveOutputEvent } from '../client/live-output';
import type { ThreadService } from '../client/thread-service';
import { relatedId } from '../domain/ids';
import { liveWatchedMemoKey } from '../domain/live-output';
import type { AgentThread } from '../domain/schemas';
import { awaitSettled } from './histories';
import { nowMs, type BenchConfig, type OperationBenchmark, type TimedOperation } from './measure';
import { costOf, Primitive, type BenchContext } from './primitives';
import { deferred, within, type Deferred } from './waiting';
import { attachRoot } from './bench-roots';

// "first delta → watcher" (issue 18): how long the first text a provider emits takes to reach a client
// watching the thread (SPEC S10.1), against the long-poll wake-up it rides on. The model is a fake with a
// provider's pacing, run by the bench's in-process worker, so emission and sight share one clock.

/** The model id under which the bench worker's provider hands out {@link createLiveModel}. */
export const liveModelId = 'bench-live';

/** A provider's pacing: time to the first token, then a word every `wordMs`. */
export const livePacing = { firstTokenMs: 30, wordMs: 10, words: 12 } as const;

/**
 * When the bench model emitted the first delta of the call a marker triggered (`nowMs()`, just before it
 * is enqueued), by marker: the sample's start. Process-wide because the worker runs in this process.
 */
const firstDeltaEmitted = new Map<string, number>();

/** A sample's marker: the content of the message that triggers its turn, the first word of the answer. */
const markerOf = (index: number) => `live-${index}`;
const markerPattern = /live-\d+/;

/** The marker in the prompt's last user message (inside the kernel's JSON envelope), if any. */
function promptMarker(prompt: LanguageModelV3CallOptions['prompt']): string | undefined {
  const lastUser = [...prompt].reverse().find((message) => message.role === 'user');
  if (lastUser?.role !== 'user') return undefined;
  const text = lastUser.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return markerPattern.exec(text)?.[0];
}

/** The answer's words, each with the space after it but the last: the marker (or "hello") first. */
const answerWords = (marker: string | undefined): string[] =>
  Array.from({ length: livePacing.words }, (_, index) =>
    index === 0 ? (marker ?? 'hello') : `w${index}`,
  ).map((word, index) => (index < livePacing.words - 1 ? `${word} ` : word));

/**
 * A real `LanguageModelV3` that streams text only: {@link livePacing} (a provider's first-token wait, then
 * word by word), the first word the marker of the message that triggered the call; `tokens` reported
 * per call, as the step model does.
 */
export function createLiveModel(tokens: number): LanguageModelV3 {
  const usage: LanguageModelV3Usage = {
    inputTokens: { total: tokens / 2, noCache: tokens / 2, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: tokens - tokens / 2, text: tokens - tokens / 2, reasoning: 0 },
  };
  const finish = { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } } as const;
  return {
    specificationVersion: 'v3',
    provider: 'agents-kit-bench',
    modelId: liveModelId,
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      const text = answerWords(promptMarker(options.prompt)).join('');
      return { content: [{ type: 'text', text }], finishReason: finish.finishReason, usage, warnings: [] };
    },
    async doStream(options): Promise<LanguageModelV3StreamResult> {
      const marker = promptMarker(options.prompt);
      const deltas = answerWords(marker);
      const parts: LanguageModelV3StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 'text' },
        ...deltas.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 'text', delta })),
        { type: 'text-end', id: 'text' },
        finish,
      ];
      let next = 0;
      let deltasSent = 0;
      return {
        // Pulled: the wait before a delta is the time the reader waits for it, as with a real provider.
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          async pull(controller) {
            const part = parts[next++];
            if (!part) return controller.close();
            if (part.type === 'text-delta') {
              const wait = deltasSent++ === 0 ? livePacing.firstTokenMs : livePacing.wordMs;
              await delay(wait, undefined, options.abortSignal ? { signal: options.abortSignal } : {});
              if (deltasSent === 1 && marker) firstDeltaEmitted.set(marker, nowMs());
            }
            controller.enqueue(part);
          },
        }),
      };
    },
  };
}

/** One streamed turn a watcher waits for: when its marker was first seen, and its call's end. */
interface Expectation {
  marker: string;
  seen: Deferred<number>;
  ended: Deferred<void>;
  /** The model call that carried the marker, once seen. */
  call?: string;
}

/** A background loop over `watchOutput` on one thread, resolving the expectations it is armed with. */
class Watcher {
  private readonly controller = new AbortController();
  private readonly expected = new Map<string, Expectation>();
  private call: string | undefined;
  private text = '';
  readonly done: Promise<void>;

  constructor(service: ThreadService, threadId: string) {
    this.done = (async () => {
      for await (const event of service.watchOutput(threadId, { signal: this.controller.signal }))
        this.take(event);
    })().then(
      () => this.fail(new Error(`the watch of ${threadId} ended`)),
      (error: unknown) => this.fail(error instanceof Error ? error : new Error(String(error))),
    );
  }

  expect(marker: string): Expectation {
    const expectation: Expectation = { marker, seen: deferred(), ended: deferred() };
    this.expected.set(marker, expectation);
    return expectation;
  }

  stop(): Promise<void> {
    this.controller.abort();
    return this.done;
  }

  private take(event: LiveOutputEvent): void {
    const call = `${event.call.turn}.${event.call.step}.${event.call.attempt}`;
    if (event.type === 'text') {
      if (event.started || call !== this.call) [this.call, this.text] = [call, ''];
      this.text += event.text;
      const at = nowMs();
      // The marker is the call's first word, followed by a space ("live-1" must not match "live-12").
      for (const expectation of this.expected.values())
        if (!expectation.call && this.text.startsWith(`${expectation.marker} `)) {
          expectation.call = call;
          expectation.seen.resolve(at);
        }
      return;
    }
    for (const [marker, expectation] of this.expected)
      if (expectation.call === call) {
        expectation.ended.resolve();
        this.expected.delete(marker);
      }
  }

  private fail(error: Error): void {
    for (const expectation of this.expected.values()) {
      expectation.seen.reject(error);
      expectation.ended.reject(error);
    }
    this.expected.clear();
  }
}

/** A model thread, its watcher, and the streamed turn it last triggered. */
interface LiveLane {
  thread: AgentThread;
  watcher: Watcher;
  last?: Expectation;
}

/** first delta → watcher: from the provider's first delta to the watcher's sight of it. */
export function firstDeltaBenchmark(context: BenchContext): OperationBenchmark {
  let service: ThreadService;
  const lanes: LiveLane[] = [];
  const treeOf = (lane: LiveLane) => [
    service.rootThreadId,
    lane.thread.id,
    relatedId('conversation', lane.thread.id),
  ];
  /** Triggers a streamed turn on `lane` (after its last one's call ended: one turn at a time). */
  const trigger = async (lane: LiveLane, index: number): Promise<Expectation> => {
    if (lane.last) await within(lane.last.ended.promise, `the end of ${lane.last.marker}`);
    const expectation = lane.watcher.expect(markerOf(index));
    lane.last = expectation;
    await service
      .rootControls()
      .sendMessage({ recipient: lane.thread.id, content: expectation.marker, triggerTurn: true });
    return expectation;
  };
  const sample = async (lane: LiveLane, index: number): Promise<TimedOperation> => {
    const expectation = await trigger(lane, index);
    const seenMs = await within(expectation.seen.promise, `the first delta of ${expectation.marker}`);
    const startMs = firstDeltaEmitted.get(expectation.marker);
    firstDeltaEmitted.delete(expectation.marker);
    if (startMs === undefined) throw new Error(`the bench model never emitted ${expectation.marker}`);
    return { startMs, completedMs: () => Promise.resolve(seenMs) };
  };
  return {
    name: 'first delta → watcher',
    kind: 'agents-kit',
    primitive: Primitive.longPoll,
    observedBy: 'client',
    description:
      'a model thread triggered by a message streams its answer (bench model: 30 ms to the first word, then a word per 10 ms); ' +
      'from the provider emitting the first delta to a watchOutput() watcher seeing it. Throughput: streamed turns/s, one turn at a time per thread, ' +
      'bounded by the bench model’s own ~140 ms per answer, so not comparable with the primitive’s',
    costNote:
      'per streamed turn (trigger → end): the send-message update, the turn’s tasks and model activity, the live-output signals (one per flush: the first delta at once, then ≤ 1 per 50 ms, the last carrying the end), ' +
      'the watcher’s watch-output updates (one per flush it wakes on), the turn’s message publish and reports to the root',
    async setup(config: BenchConfig) {
      service = await attachRoot(context, 'live');
      for (let lane = 0; lane < config.concurrency; lane++) {
        const thread = await service.rootControls().spawn({
          task: 'bench live output',
          name: `live${lane}`,
          model: liveModelId,
          kernel: { type: 'model' },
        });
        // Its first turn (the task) runs unwatched: nothing streams, and the watcher starts on a quiet thread.
        await service.rootControls().wait({ threadIds: [thread.id], timeoutMs: 30_000 });
        const watcher = new Watcher(service, thread.id);
        context.cleanup.push(() => watcher.stop());
        lanes.push({ thread, watcher });
        await watchedMemo(context, relatedId('conversation', thread.id));
      }
    },
    operate: (index, lane) => sample(lanes[lane]!, index),
    // The call's end (its last flush), then the turn's publish and reports, before the next sample.
    async settle() {
      const lane = lanes[0]!;
      if (lane.last) await within(lane.last.ended.promise, `the end of ${lane.last.marker}`);
      await awaitSettled(context.client, treeOf(lane));
    },
    cost: (operations) =>
      costOf(context.client, treeOf(lanes[0]!), operations, async (index) => {
        const expectation = await trigger(lanes[0]!, 3_000_000 + index);
        await within(expectation.ended.promise, `the end of ${expectation.marker}`);
        firstDeltaEmitted.delete(expectation.marker);
        return [];
      }),
  };
}

/** Waits until the conversation's memo says it is watched: before it, a call would not stream. */
async function watchedMemo(context: BenchContext, conversationId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { memo } = await context.client.workflow.getHandle(conversationId).describe();
    if (Number(memo?.[liveWatchedMemoKey] ?? 0) > Date.now()) return;
    if (Date.now() > deadline) throw new Error(`${conversationId} never became watched`);
    await delay(25);
  }
}
