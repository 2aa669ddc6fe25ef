import { patched } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';
import { scriptedKernelModel } from '../domain/usage';
import type { KernelSpec, ScriptStepShape } from '../domain/schemas';
import { runGatedTool } from './approval-gate';
import type { Kernel, TurnAnswer, TurnContext } from './kernel';
import { patches } from './patches';

type ScriptedSpec = Extract<KernelSpec, { type: 'scripted' }>;

/**
 * The deterministic kernel: turn n plays script n (the last script repeats). `send.to` and `wait.on`
 * name `parent`, `root`, `self`, a label given by an earlier `spawn … as`, or a thread id. `{{last}}` in
 * a text is the previous step's result (text, or JSON), `{{inbox}}` the contents of this turn's messages
 * (in a reply, a message, a prompt, and a spawn's task, instructions and history).
 * `reply.tokens` stands in for a model's token usage, so budgets can be exercised without a model: they
 * are charged when the reply is reached ({@link reply}).
 */
export class ScriptedKernel implements Kernel {
  constructor(private readonly spec: ScriptedSpec) {}

  async runTurn(context: TurnContext): Promise<TurnAnswer> {
    const script = this.spec.turns[Math.min(context.turn, this.spec.turns.length) - 1] ?? [];
    let last = '';
    for (const step of script as ScriptStepShape[]) {
      const fill = (text: string) =>
        text
          .replaceAll('{{last}}', last)
          .replaceAll('{{inbox}}', context.inbox.map((message) => message.content).join('\n'));
      switch (step.type) {
        case 'tool':
          // SPEC S11.4: through the same approval gate as the model kernel's calls, in runs that have it.
          last = render(
            context.approval
              ? await runGatedTool(context, context.approval, step.tool, step.input)
              : await context.runTool(step.tool, step.input),
          );
          break;
        case 'spawn': {
          const request = filledRequest(step.request, fill);
          const thread = step.remoteTarget
            ? await context.controls.spawnRemote({ ...request, target: step.remoteTarget })
            : await context.controls.spawn(request);
          if (step.as) context.memory[`label:${step.as}`] = thread.id;
          last = thread.id;
          break;
        }
        case 'send':
          last = (
            await context.controls.sendMessage({
              recipient: resolve(context, step.to),
              content: fill(step.content),
              triggerTurn: step.triggerTurn ?? false,
            })
          ).id;
          break;
        case 'wait': {
          const result = await context.controls.wait({
            threadIds: step.on.map((target) => resolve(context, target)),
            timeoutMs: step.timeoutMs ?? 30_000,
          });
          last = result.timedOut
            ? 'timed out'
            : result.outcomes.map((outcome) => outcome.latestTurn?.result ?? outcome.status).join('\n');
          break;
        }
        case 'load':
          last = render(await context.controls.loadThread(resolve(context, step.target)));
          break;
        case 'list':
          last = render((await context.controls.listThreads()).map((thread) => thread.path));
          break;
        case 'ask': {
          const answer = await context.ask({ kind: step.kind, prompt: fill(step.prompt) });
          last =
            answer.type === 'approval'
              ? answer.approved
                ? 'approved'
                : `denied${answer.reason ? `: ${answer.reason}` : ''}`
              : answer.text;
          break;
        }
        case 'reply':
          return reply(context, fill(step.text), step.tokens ?? 0);
        case 'fail':
          throw new KitError(ErrorKind.InvalidState, fill(step.message));
      }
    }
    return { text: last, tokens: 0 };
  }
}

/**
 * SPEC S6.4: a reply's `tokens` stand in for a model's usage, so they are charged as the reply is reached,
 * before the turn completes (`AgentControls.chargeReported`): refused once the budget is used up, and
 * the reply that goes past it counts and fails its turn with QuotaExceeded. They go to the usage ledger
 * once they count, and the turn reports none at its end (its `tokens` are 0, as a model turn's).
 * Histories recorded before this charged them only at the turn's end (workflows/patches.ts).
 */
async function reply(context: TurnContext, text: string, tokens: number): Promise<TurnAnswer> {
  if (tokens === 0 || !patched(patches.scriptedTokensCharged)) return { text, tokens };
  const { endsTurn } = await context.controls.chargeReported(tokens);
  context.recordUsage(scriptedKernelModel, { inputTokens: 0, outputTokens: tokens, costUsd: 0 });
  if (endsTurn !== undefined) throw endsTurn;
  return { text, tokens: 0 };
}

function resolve(context: TurnContext, target: string): string {
  switch (target) {
    case 'self':
      return context.thread.id;
    case 'root':
      return context.thread.rootId;
    case 'parent':
      return context.thread.parentId ?? context.thread.id;
    default:
      return context.memory[`label:${target}`] ?? target;
  }
}

const render = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');

type SpawnStep = Extract<ScriptStepShape, { type: 'spawn' }>;

/** A spawn request with `fill` applied to its task, instructions and history texts. */
function filledRequest(request: SpawnStep['request'], fill: (text: string) => string): SpawnStep['request'] {
  return {
    ...request,
    task: fill(request.task),
    ...(request.instructions === undefined ? {} : { instructions: fill(request.instructions) }),
    ...(request.history
      ? { history: request.history.map((entry) => ({ ...entry, text: fill(entry.text) })) }
      : {}),
  };
}
