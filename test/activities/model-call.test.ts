// SPEC S10.1: a model call streams its answer; `onText` sees each text delta as it is read, and the
// answer (text, tool calls, tokens) comes out as it did when the call did not stream.
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { callLanguageModel, toPrompt, type ModelAnswer, type ToolSpec } from '../../activities/model-call';
import { providerFailure } from '../../activities/model';
import { createModelProvider, loadModelConfig } from '../../activities/providers';
import { createScriptedModel } from '../../activities/scripted-model';
import type { TranscriptEntry } from '../../domain/transcript';
import { KitError } from '../../domain/errors';
import { startOpenAIServer, type ReceivedRequest, type Reply } from '../helpers/openai-server';

const task: TranscriptEntry[] = [{ role: 'user', text: 'write a short note about rivers' }];
const tool = (name: string): ToolSpec => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: 'object', properties: {}, additionalProperties: true },
});

/** One call, recording every delta `onText` got and when. */
async function streamed(
  model: LanguageModelV3,
  options: {
    system?: string;
    tools?: ToolSpec[];
    signal?: AbortSignal;
    onDelta?: (delta: string, count: number) => void;
  } = {},
) {
  const deltas: string[] = [];
  const times: number[] = [];
  const answer = await callLanguageModel(model, {
    system: options.system ?? 'You are agent /root/writer.',
    transcript: task,
    tools: options.tools ?? [],
    abortSignal: options.signal ?? new AbortController().signal,
    onText: (delta) => {
      deltas.push(delta);
      times.push(Date.now());
      options.onDelta?.(delta, deltas.length);
    },
  });
  return { answer, deltas, times };
}

/** The rejection of `promise`, and how long after `since` it came. */
async function rejection(
  promise: Promise<unknown>,
  since: () => number,
): Promise<{ error: unknown; ms: number }> {
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - since() };
  }
  throw new Error('expected the call to fail');
}

/** A model whose stream is `parts`, then whatever `tail` does (nothing: the stream stays open). */
function partsModel(parts: LanguageModelV3StreamPart[], tail: 'close' | 'hang' = 'close') {
  const seen: { cancelled: boolean; options?: LanguageModelV3CallOptions } = { cancelled: false };
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'parts',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('the call must stream')),
    async doStream(options) {
      seen.options = options;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            if (tail === 'close') controller.close();
          },
          cancel() {
            seen.cancelled = true;
          },
        }),
      };
    },
  };
  return { model, seen };
}

const finish = (input: number, output: number): LanguageModelV3StreamPart => ({
  type: 'finish',
  usage: {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  },
  finishReason: { unified: 'stop', raw: 'stop' },
});

describe('the stream reading', () => {
  test('text deltas reach onText in order, reasoning and empty deltas do not, tokens come from finish', async () => {
    const { model, seen } = partsModel([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'thinking…' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'text-delta', id: 't', delta: 'one ' },
      { type: 'text-delta', id: 't', delta: 'two ' },
      { type: 'text-delta', id: 't', delta: 'three' },
      { type: 'text-end', id: 't' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'publish', input: '{"title":"x"}' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'raw', input: 'not json' },
      finish(12, 5),
    ]);
    const { answer, deltas } = await streamed(model, { tools: [tool('publish'), tool('raw')] });
    expect(deltas).toEqual(['one ', 'two ', 'three']);
    expect(answer).toEqual<ModelAnswer>({
      text: 'one two three',
      toolCalls: [
        { id: 'c1', name: 'publish', input: { title: 'x' } },
        { id: 'c2', name: 'raw', input: 'not json' },
      ],
      tokens: 17,
      usage: { inputTokens: 12, outputTokens: 5 },
    });
    expect(seen.options?.toolChoice).toEqual({ type: 'auto' });
    expect(seen.options?.tools?.map((offered) => offered.name)).toEqual(['publish', 'raw']);
  });

  test('without a finish part no tokens count; without tools none are offered; onText is optional', async () => {
    const { model, seen } = partsModel([{ type: 'text-delta', id: 't', delta: 'hi' }]);
    const answer = await callLanguageModel(model, {
      system: 'You are agent /root.',
      transcript: task,
      tools: [],
      abortSignal: new AbortController().signal,
    });
    expect(answer).toMatchObject({ text: 'hi', toolCalls: [], tokens: 0, usage: { outputTokens: 0 } });
    expect(seen.options?.tools).toBeUndefined();
    expect(seen.options?.toolChoice).toBeUndefined();
  });

  test('an error part is thrown as it is, and providerFailure classifies it as a failed request', async () => {
    const failure = new APICallError({
      message: 'busy',
      url: 'http://x',
      requestBodyValues: {},
      statusCode: 503,
    });
    const { model, seen } = partsModel(
      [{ type: 'text-delta', id: 't', delta: 'partial' }, { type: 'error', error: failure }, finish(1, 1)],
      'hang',
    );
    const { error } = await rejection(streamed(model), () => 0);
    expect(error).toBe(failure);
    expect(providerFailure(error).type).toBe('Integration');
    expect(seen.cancelled).toBe(true);
  });

  test('an error part that is not an Error becomes one that carries its message', async () => {
    const { model } = partsModel([{ type: 'error', error: { message: 'quota gone', code: 'x' } }]);
    const { error } = await rejection(streamed(model), () => 0);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('quota gone');
  });

  test('an abort ends the reading at once, even when the provider ignores the signal', async () => {
    const { model, seen } = partsModel([{ type: 'text-delta', id: 't', delta: 'first' }], 'hang');
    const controller = new AbortController();
    const reason = new Error('interrupted by the user');
    let abortedAt = 0;
    const call = streamed(model, {
      signal: controller.signal,
      onDelta: () =>
        setTimeout(() => {
          abortedAt = Date.now();
          controller.abort(reason);
        }, 20),
    });
    const { error, ms } = await rejection(call, () => abortedAt);
    expect(error).toBe(reason);
    expect(ms).toBeLessThan(1_000);
    expect(seen.cancelled).toBe(true);
  });

  test('an abort before the stream has started rejects with an AbortError', async () => {
    const never: LanguageModelV3 = { ...partsModel([]).model, doStream: () => new Promise(() => {}) };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const { error } = await rejection(streamed(never, { signal: controller.signal }), () => 0);
    expect((error as Error).name).toBe('AbortError');
  });
});

describe('the scripted model', () => {
  test('streams its text a word at a time, the same answer as it generates', async () => {
    const { answer, deltas } = await streamed(createScriptedModel());
    const generated = await createScriptedModel().doGenerate({
      prompt: toPrompt('You are agent /root/writer.', task),
    });
    const text = generated.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(answer.text).toBe(text);
    expect(answer.text).toContain('write a short note about rivers');
    expect(deltas.join('')).toBe(text);
    expect(deltas).toHaveLength(text.trim().split(/\s+/).length);
    expect(deltas.every((delta) => /^\s*\S+\s*$/.test(delta))).toBe(true);
    expect(answer.tokens).toBe(
      (generated.usage.inputTokens.total ?? 0) + (generated.usage.outputTokens.total ?? 0),
    );
  });

  test('streams its tool calls whole, with their inputs and tokens', async () => {
    const { answer, deltas } = await streamed(createScriptedModel(), {
      system: 'You are agent /root of a tree.',
      tools: [tool('spawn_agent'), tool('wait_agents')],
    });
    expect(deltas).toEqual([]);
    expect(answer.text).toBe('');
    expect(answer.toolCalls).toEqual([
      { id: 'scripted-1', name: 'spawn_agent', input: expect.objectContaining({ name: 'researcher' }) },
      { id: 'scripted-2', name: 'spawn_agent', input: expect.objectContaining({ name: 'writer' }) },
    ]);
    expect(answer.tokens).toBeGreaterThan(0);
  });

  test('wordDelayMs spaces the words', async () => {
    const wordDelayMs = 60;
    const started = Date.now();
    const { answer, deltas, times } = await streamed(createScriptedModel({ wordDelayMs }));
    expect(deltas.join('')).toBe(answer.text);
    expect(deltas.length).toBeGreaterThan(5);
    // Each word waits its delay: the first comes late, and the words spread over the whole stream.
    expect(times[0]! - started).toBeGreaterThanOrEqual(wordDelayMs / 3);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(((deltas.length - 1) * wordDelayMs) / 3);
  });

  test('an abort ends a paced stream at once and leaves no timer behind', async () => {
    // The timers the call sets, and those it clears (both still do what they do).
    const created = jest.spyOn(global, 'setTimeout');
    const cleared = jest.spyOn(global, 'clearTimeout');
    try {
      const controller = new AbortController();
      let abortedAt = 0;
      const call = streamed(createScriptedModel({ wordDelayMs: 1_500 }), {
        signal: controller.signal,
        onDelta: () => {
          abortedAt = Date.now();
          controller.abort();
        },
      });
      const { error, ms } = await rejection(call, () => abortedAt);
      expect((error as Error).name).toBe('AbortError');
      // The next word was 1.5 s away: the abort did not wait for it, and its timer went with it.
      expect(ms).toBeLessThan(500);
      const last = created.mock.results.at(-1)?.value as unknown;
      expect(created.mock.calls.length).toBeGreaterThanOrEqual(2);
      expect(cleared.mock.calls.some(([timer]) => timer === last)).toBe(true);
    } finally {
      jest.restoreAllMocks();
    }
  });
});

describe('AGENTS_KIT_SCRIPTED_WORD_DELAY_MS', () => {
  test.each(['abc', '-1', '2001', '1.5', '1e3'])('%s is refused with a Protocol error naming it', (value) => {
    const load = () => loadModelConfig({ AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: value });
    expect(load).toThrow(KitError);
    expect(load).toThrow(/AGENTS_KIT_SCRIPTED_WORD_DELAY_MS/);
    expect(() => load()).toThrow(expect.objectContaining({ kind: 'Protocol' }));
  });

  test('a good value paces the scripted provider’s model; unset, it is 0', async () => {
    expect(loadModelConfig({}).AGENTS_KIT_SCRIPTED_WORD_DELAY_MS).toBeUndefined();
    expect(
      loadModelConfig({ AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: '2000' }).AGENTS_KIT_SCRIPTED_WORD_DELAY_MS,
    ).toBe(2_000);
    const provider = createModelProvider(loadModelConfig({ AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: '50' }));
    const { deltas, times } = await streamed(provider.model(provider.defaultModel));
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(((deltas.length - 1) * 50) / 3);
  });
});

let server: Awaited<ReturnType<typeof startOpenAIServer>>;
let policy: (request: ReceivedRequest) => Reply = () => ({ text: 'unset' });
beforeAll(async () => {
  server = await startOpenAIServer((request) => policy(request));
});
afterAll(() => server?.close());
beforeEach(() => server.requests.splice(0));

const providers = {
  'openai-compatible': () =>
    createModelProvider(
      loadModelConfig({
        AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
        AGENTS_KIT_MODEL: 'test-model',
        AGENTS_KIT_MODEL_BASE_URL: server.url,
      }),
    ),
  openai: () =>
    createModelProvider(
      loadModelConfig({
        AGENTS_KIT_MODEL_PROVIDER: 'openai',
        AGENTS_KIT_MODEL: 'gpt-test',
        AGENTS_KIT_MODEL_BASE_URL: server.url,
        OPENAI_API_KEY: 'test-key',
      }),
    ),
};

describe.each(Object.keys(providers) as (keyof typeof providers)[])('a real %s provider', (name) => {
  const model = () => {
    const provider = providers[name]();
    return provider.model(provider.defaultModel);
  };

  test('streams the text word by word; the tokens are what the server reported', async () => {
    const text = 'Rivers carry water\nto the sea, slowly.';
    policy = () => ({ text, tokens: 42 });
    const { answer, deltas } = await streamed(model());
    expect(server.requests[0]!.body.stream).toBe(true);
    expect(deltas).toEqual(['Rivers ', 'carry ', 'water\n', 'to ', 'the ', 'sea, ', 'slowly.']);
    expect(answer).toMatchObject({ text, toolCalls: [], tokens: 42 });
    expect(answer.usage!.inputTokens + answer.usage!.outputTokens).toBe(42);
    expect(server.requests[0]!.tokens).toBe(42);
  });

  test('streams tool calls with their inputs', async () => {
    policy = () => ({
      toolCalls: [
        { name: 'word_count', input: { text: 'a b c' } },
        { name: 'publish', input: { title: 'Rivers' } },
      ],
      tokens: 7,
    });
    const { answer, deltas } = await streamed(model(), { tools: [tool('word_count'), tool('publish')] });
    expect(deltas).toEqual([]);
    expect(answer).toMatchObject({
      text: '',
      toolCalls: [
        { id: expect.stringMatching(/^call_\d+_0$/), name: 'word_count', input: { text: 'a b c' } },
        { id: expect.stringMatching(/^call_\d+_1$/), name: 'publish', input: { title: 'Rivers' } },
      ],
      tokens: 7,
    });
    expect(answer.usage!.inputTokens + answer.usage!.outputTokens).toBe(7);
    const offered = server.requests[0]!.body.tools?.map((spec) => spec.function.name);
    expect(offered).toEqual(['word_count', 'publish']);
  });

  test('an abort mid-stream rejects at once and the server sees the client go', async () => {
    const words = Array.from({ length: 60 }, (_, n) => `w${n}`).join(' ');
    policy = () => ({ text: words, chunkDelayMs: 40 });
    const controller = new AbortController();
    let abortedAt = 0;
    let afterAbort = 0;
    const call = streamed(model(), {
      signal: controller.signal,
      onDelta: (_delta, count) => {
        if (abortedAt) afterAbort++;
        if (count === 3) {
          abortedAt = Date.now();
          controller.abort();
        }
      },
    });
    const { error, ms } = await rejection(call, () => abortedAt);
    expect((error as Error).name).toBe('AbortError');
    // The rest of the stream was 2.3 s away.
    expect(ms).toBeLessThan(1_000);
    expect(afterAbort).toBe(0);
    for (let waited = 0; !server.requests[0]!.aborted && waited < 3_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.requests[0]!.aborted).toBe(true);
    expect(server.requests[0]!.tokens).toBe(0);
  });

  test('an abort before the first byte rejects at once', async () => {
    policy = () => ({ text: 'late', delayMs: 2_000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const { error, ms } = await rejection(streamed(model(), { signal: controller.signal }), () => started);
    expect((error as Error).name).toBe('AbortError');
    expect(ms).toBeLessThan(1_500);
  });

  test.each([
    [500, 'Integration'],
    [401, 'PermissionDenied'],
  ])('an HTTP %i reply is an APICallError that providerFailure makes %s', async (status, kind) => {
    policy = () => ({ status, error: `failure ${status}` });
    const { error } = await rejection(streamed(model()), () => 0);
    expect(APICallError.isInstance(error)).toBe(true);
    expect((error as APICallError).statusCode).toBe(status);
    expect(providerFailure(error).type).toBe(kind);
  });
});
