import type { LanguageModelV3StreamPart, LanguageModelV3StreamResult } from '@ai-sdk/provider';
import type { ModelAnswer } from './model-call';
import { callTokens } from '../domain/usage';

/** A tool call's input: the model sends JSON text; text that is not JSON is passed on as it is. */
function parsedInput(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** What an aborted call throws: the signal's reason when it is an error, else an AbortError. */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException('the model call was aborted', 'AbortError');
}

/**
 * An `error` stream part's value as an Error: an APICallError (or any Error) as it is, so
 * `providerFailure` classifies it as it does a failed request; a provider's error object by its message.
 */
function streamError(value: unknown): Error {
  if (value instanceof Error) return value;
  const message =
    typeof value === 'string'
      ? value
      : typeof value === 'object' && value !== null && 'message' in value && typeof value.message === 'string'
        ? value.message
        : JSON.stringify(value);
  return new Error(`the model stream failed: ${message}`, { cause: value });
}

const aborted = Symbol('aborted');

/**
 * `promise`, or {@link aborted} as soon as `signal` aborts: a provider that does not watch the signal
 * (or is slow to) must not hold up an interrupt.
 */
async function unlessAborted<Value>(
  promise: Promise<Value>,
  signal: AbortSignal,
): Promise<Value | typeof aborted> {
  if (signal.aborted) return aborted;
  let onAbort = () => {};
  const abortion = new Promise<typeof aborted>((resolve) => {
    onAbort = () => resolve(aborted);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, abortion]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Starts the stream (the `doStream` call), giving up at once when `signal` aborts; a stream that still
 * arrives after that is cancelled, so its connection is not left open.
 */
export async function startStream(
  started: PromiseLike<LanguageModelV3StreamResult>,
  signal: AbortSignal,
): Promise<ReadableStream<LanguageModelV3StreamPart>> {
  const pending = Promise.resolve(started);
  const result = await unlessAborted(pending, signal);
  if (result !== aborted) return result.stream;
  pending.then(
    (late) => late.stream.cancel().catch(() => {}),
    () => {},
  );
  throw abortError(signal);
}

/** The answer as it builds up from the parts read so far. */
class AnswerBuilder {
  private readonly texts: string[] = [];
  private readonly toolCalls: ModelAnswer['toolCalls'] = [];
  private usage = { inputTokens: 0, outputTokens: 0 };

  constructor(private readonly onText: ((delta: string) => void) | undefined) {}

  /** Takes one part in; an `error` part is thrown. Reasoning, metadata and the rest are not part of it. */
  add(part: LanguageModelV3StreamPart): void {
    switch (part.type) {
      case 'text-delta':
        if (part.delta === '') return;
        this.texts.push(part.delta);
        this.onText?.(part.delta);
        return;
      case 'tool-call':
        this.toolCalls.push({ id: part.toolCallId, name: part.toolName, input: parsedInput(part.input) });
        return;
      case 'finish':
        this.usage = {
          inputTokens: callTokens(part.usage.inputTokens.total),
          outputTokens: callTokens(part.usage.outputTokens.total),
        };
        return;
      case 'error':
        throw streamError(part.error);
    }
  }

  answer(): ModelAnswer {
    return {
      text: this.texts.join(''),
      toolCalls: this.toolCalls,
      tokens: this.usage.inputTokens + this.usage.outputTokens,
      usage: this.usage,
    };
  }
}

/**
 * Reads a model's stream to its end into a {@link ModelAnswer}, handing each text delta to `onText` as
 * it is read. An abort stops the reading at once (the reader is cancelled, which closes the provider's
 * connection) and throws; so does an `error` part.
 */
export async function readModelStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  options: { abortSignal: AbortSignal; onText?: ((delta: string) => void) | undefined },
): Promise<ModelAnswer> {
  const builder = new AnswerBuilder(options.onText);
  const reader = stream.getReader();
  try {
    for (;;) {
      const next = await unlessAborted(reader.read(), options.abortSignal);
      if (next === aborted) throw abortError(options.abortSignal);
      if (next.done) return builder.answer();
      builder.add(next.value);
    }
  } catch (error) {
    // The stream may already be errored or closed: cancelling it then has nothing to say.
    reader.cancel(error).catch(() => {});
    throw error;
  }
}
