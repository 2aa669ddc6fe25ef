import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
} from '@ai-sdk/provider';

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

/** A deterministic LanguageModelV3 that drives the same tools as a real model, offline (SPEC S6.3). */
export function createScriptedModel(): LanguageModelV3 {
  let callCounter = 0;
  return {
    specificationVersion: 'v3',
    provider: 'agents-kit',
    modelId: scriptedModelId,
    supportedUrls: {},
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      const decision = decide(options);
      const content: LanguageModelV3Content[] = decision.calls
        ? decision.calls.map((call) => ({
            type: 'tool-call',
            toolCallId: `scripted-${++callCounter}`,
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
        warnings: [],
      };
    },
    async doStream() {
      throw new Error('the scripted model does not stream');
    },
  };
}
