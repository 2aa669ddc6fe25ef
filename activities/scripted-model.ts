import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { abortError } from './model-stream';

/** The id the scripted model reports, so every transcript and log says plainly that no real model ran. */
export const scriptedModelId = 'agents-kit-scripted';

type Prompt = LanguageModelV3CallOptions['prompt'];

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content
          .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
          .join('')
      : '';

function toolResults(prompt: Prompt): { name: string; output: string }[] {
  return prompt.flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) =>
          part.type === 'tool-result'
            ? [
                {
                  name: part.toolName,
                  output:
                    part.output.type === 'text'
                      ? part.output.value
                      : 'value' in part.output
                        ? JSON.stringify(part.output.value)
                        : '',
                },
              ]
            : [],
        )
      : [],
  );
}

/**
 * What the scripted model does, decided only from the prompt, so a replayed turn makes the same calls:
 * the root delegates the task to a researcher and a writer, waits for both and sums up; a sub-agent uses
 * the tools it has (word_count, then publish) and answers; later turns acknowledge new messages.
 */
function decide(options: LanguageModelV3CallOptions): {
  text?: string;
  calls?: { name: string; input: unknown }[];
} {
  const prompt = options.prompt;
  const system = prompt
    .filter((message) => message.role === 'system')
    .map((message) => textOf(message.content))
    .join('\n');
  const path = /agent (\/\S+)/.exec(system)?.[1] ?? '/root';
  const users = prompt.filter((message) => message.role === 'user');
  const last = prompt.at(-1);
  const task = textOf(users[0]?.content);
  const tools = new Set((options.tools ?? []).map((tool) => tool.name));
  const results = toolResults(prompt);
  if (last?.role === 'user' && users.length > 1)
    return { text: `(scripted model) ${path} noted: ${textOf(last.content).slice(0, 200)}` };
  if (path === '/root' && tools.has('spawn_agent')) {
    const spawned = results
      .filter((result) => result.name === 'spawn_agent')
      .map((result) => JSON.parse(result.output) as { id?: string });
    if (spawned.length === 0) {
      return {
        calls: [
          {
            name: 'spawn_agent',
            input: { name: 'researcher', task: `Research the facts for: ${task}`, tools: ['word_count'] },
          },
          {
            name: 'spawn_agent',
            input: { name: 'writer', task: `Write the text for: ${task}`, tools: ['word_count', 'publish'] },
          },
        ],
      };
    }
    const ids = spawned.flatMap((thread) => (thread.id ? [thread.id] : []));
    const waits = results.filter((result) => result.name === 'wait_agents');
    const finished = new Set(
      waits
        .flatMap(
          (wait) =>
            (JSON.parse(wait.output) as { outcomes?: { id: string; status: string }[] }).outcomes ?? [],
        )
        .filter((outcome) => outcome.status !== 'running' && outcome.status !== 'pending')
        .map((outcome) => outcome.id),
    );
    const pending = ids.filter((id) => !finished.has(id));
    if (pending.length > 0 && waits.length < 10)
      return { calls: [{ name: 'wait_agents', input: { ids: pending, timeout_ms: 60_000 } }] };
    const answers = waits
      .flatMap(
        (wait) =>
          (JSON.parse(wait.output) as { outcomes?: { path: string; result?: string }[] }).outcomes ?? [],
      )
      .filter((outcome) => outcome.result);
    const unique = [...new Map(answers.map((answer) => [answer.path, answer.result])).entries()];
    return {
      text: `(scripted model) Done: ${task}\n${unique.map(([agent, result]) => `- ${agent}: ${result}`).join('\n')}`,
    };
  }
  const used = new Set(results.map((result) => result.name));
  if (tools.has('word_count') && !used.has('word_count'))
    return { calls: [{ name: 'word_count', input: { text: task } }] };
  if (tools.has('publish') && !used.has('publish'))
    return { calls: [{ name: 'publish', input: { title: task.slice(0, 80) } }] };
  const facts = results.map((result) => `${result.name} → ${result.output.slice(0, 80)}`).join('; ');
  return { text: `(scripted model) ${path} finished "${task}"${facts ? ` (${facts})` : ''}` };
}

/** One answer of the scripted model, the same whether it is asked to generate or to stream. */
interface ScriptedAnswer {
  content: LanguageModelV3Content[];
  finishReason: LanguageModelV3FinishReason;
  usage: LanguageModelV3Usage;
}

/** The decision for `options` as the model's answer; `nextCallId` numbers the tool calls. */
function answer(options: LanguageModelV3CallOptions, nextCallId: () => string): ScriptedAnswer {
  const decision = decide(options);
  const content: LanguageModelV3Content[] = decision.calls
    ? decision.calls.map((call) => ({
        type: 'tool-call',
        toolCallId: nextCallId(),
        toolName: call.name,
        input: JSON.stringify(call.input),
      }))
    : [{ type: 'text', text: decision.text ?? '' }];
  const inputTokens = Math.ceil(JSON.stringify(options.prompt).length / 4);
  const outputTokens = Math.ceil(JSON.stringify(content).length / 4);
  return {
    content,
    finishReason: { unified: decision.calls ? 'tool-calls' : 'stop', raw: undefined },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  };
}

/** Text in word pieces, each word with the whitespace after it, so the pieces join to the text exactly. */
function wordsOf(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** An answer as the parts a streaming provider sends: text word by word, tool calls whole, the finish. */
function streamParts(scripted: ScriptedAnswer): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  scripted.content.forEach((content, index) => {
    if (content.type === 'text') {
      const id = `text-${index}`;
      parts.push({ type: 'text-start', id });
      for (const delta of wordsOf(content.text)) parts.push({ type: 'text-delta', id, delta });
      parts.push({ type: 'text-end', id });
    } else if (content.type === 'tool-call') parts.push(content);
  });
  parts.push({ type: 'finish', usage: scripted.usage, finishReason: scripted.finishReason });
  return parts;
}

/** Waits `ms`, or rejects as soon as `signal` aborts; either way no timer or listener is left behind. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `parts` as a stream, waiting `wordDelayMs` before each text delta. The call's abort (or the reader
 * cancelling) ends it: the stream errors with the abort's reason, and a pending wait is cleared.
 */
function partStream(
  parts: readonly LanguageModelV3StreamPart[],
  wordDelayMs: number,
  abortSignal: AbortSignal | undefined,
): ReadableStream<LanguageModelV3StreamPart> {
  const stop = new AbortController();
  const forwardAbort = () => stop.abort(abortSignal?.reason);
  if (abortSignal?.aborted) forwardAbort();
  else abortSignal?.addEventListener('abort', forwardAbort, { once: true });
  const done = () => abortSignal?.removeEventListener('abort', forwardAbort);
  let next = 0;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      try {
        if (stop.signal.aborted) throw abortError(stop.signal);
        const part = parts[next++];
        if (!part) {
          done();
          controller.close();
          return;
        }
        if (wordDelayMs > 0 && part.type === 'text-delta') await pause(wordDelayMs, stop.signal);
        controller.enqueue(part);
      } catch (error) {
        done();
        throw error;
      }
    },
    cancel(reason) {
      stop.abort(reason);
      done();
    },
  });
}

/**
 * A deterministic LanguageModelV3 that drives the same tools as a real model, offline (SPEC S6.3).
 * `wordDelayMs` paces its streamed text, a word at a time, so a demo shows text arriving; the default 0
 * streams at once (tests, CI).
 */
export function createScriptedModel(options: { wordDelayMs?: number } = {}): LanguageModelV3 {
  const wordDelayMs = options.wordDelayMs ?? 0;
  let callCounter = 0;
  const nextCallId = () => `scripted-${++callCounter}`;
  return {
    specificationVersion: 'v3',
    provider: 'agents-kit',
    modelId: scriptedModelId,
    supportedUrls: {},
    async doGenerate(call): Promise<LanguageModelV3GenerateResult> {
      return { ...answer(call, nextCallId), warnings: [] };
    },
    async doStream(call): Promise<LanguageModelV3StreamResult> {
      const parts = streamParts(answer(call, nextCallId));
      return { stream: partStream(parts, wordDelayMs, call.abortSignal) };
    },
  };
}
