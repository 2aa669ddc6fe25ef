import { CancelledFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import { ErrorKind, KitError, objectInput, parseInput } from '../domain/errors';
import { allTools, ToolName } from '../domain/tool-names';

/** A user tool: a name the kernel calls it by, its zod input, and an implementation run as an activity. */
export interface ToolDefinition<Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Input;
  needsApproval?: boolean;
  /**
   * A fast tool (well under a second, safe to run again): run as a Temporal local activity, in the
   * worker that runs the thread's workflow task, so a call costs no activity task round trip. Its result
   * is recorded in history like any tool's; it cannot heartbeat, so an interrupt waits for it to end.
   */
  local?: boolean;
  /**
   * Runs a call. `signal` aborts when the call is interrupted (SPEC S4.6): stop there, and the turn ends
   * as soon as the call does. The call ends interrupted, not with its output, if the signal aborted
   * while it ran — the turn it belonged to takes no further step. A call still running
   * {@link abandonAfterAbortMs} after its signal aborted is reported cancelled without it (its work goes
   * on unobserved, its result is dropped), so an interrupt, a close or a worker's stop waits no longer.
   */
  run(input: z.output<Input>, call: ToolCallContext): Promise<unknown>;
}

/** What a tool's call is given besides its input. */
export interface ToolCallContext {
  /** Aborts when the call is interrupted (an interrupt of its turn, the thread's close or shutdown). */
  signal: AbortSignal;
}

/** Defines a tool with its input type inferred from the zod schema (checked: a KitError says what is wrong). */
export function defineTool<Input extends z.ZodType>(
  definition: ToolDefinition<Input>,
): ToolDefinition<Input> {
  return checkTool(definition, 'defineTool') as ToolDefinition<Input>;
}

/**
 * SPEC S2.4: `definition` as a worker can run it — a name models can call, a description, a zod input
 * schema and a `run` function — or a Protocol KitError naming what is wrong (JavaScript callers can
 * pass anything; a bad tool would otherwise fail at its first call, deep in the model provider).
 */
export function checkTool(definition: unknown, where: string): ToolDefinition {
  const tool = objectInput(definition, where) as Partial<Record<keyof ToolDefinition, unknown>>;
  const name = parseInput(UserToolName, tool.name, `${where}: name`);
  const refuse = (field: string, expected: string) =>
    KitError.protocol(`${where}: tool ${name}: \`${field}\` must be ${expected}`, { fields: [field] });
  if (
    typeof tool.description !== 'string' ||
    tool.description.trim() === '' ||
    tool.description.length > 10_000
  )
    throw refuse('description', 'a text of 1 to 10,000 characters');
  if (typeof (tool.input as z.ZodType | undefined)?.safeParse !== 'function')
    throw refuse('input', 'a zod schema');
  if (typeof tool.run !== 'function') throw refuse('run', 'a function');
  for (const flag of ['needsApproval', 'local'] as const)
    if (tool[flag] !== undefined && typeof tool[flag] !== 'boolean') throw refuse(flag, 'true or false');
  return tool as ToolDefinition;
}

/** A user tool's name: what {@link ToolName} allows, except `*` (every tool). */
const UserToolName = ToolName.refine((name) => name !== allTools, 'expected a tool name, not *');

/** Waits `ms`, heartbeating, and stops as soon as the activity is cancelled (an interrupt, say). */
async function cancellableSleep(ms: number): Promise<void> {
  const context = Context.current();
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    context.heartbeat({ remainingMs: deadline - Date.now() });
    await Promise.race([context.sleep(Math.min(1000, deadline - Date.now())), context.cancelled]);
  }
}

/** Tools every worker has: handy for demos and tests. */
export const builtinTools: ToolDefinition[] = [
  defineTool({
    name: 'echo',
    description: 'Returns its input unchanged.',
    input: z.unknown(),
    run: async (input) => input,
  }),
  defineTool({
    name: 'sleep',
    description: 'Waits the given number of milliseconds (heartbeating), then says how long it slept.',
    input: z.object({ ms: z.number().int().min(0).max(3_600_000) }).strict(),
    run: async ({ ms }) => {
      await cancellableSleep(ms);
      return `slept ${ms} ms`;
    },
  }),
  defineTool({
    name: 'publish',
    description: 'Publishes a text under a title for everyone to read. A person must approve it first.',
    input: z.object({ title: z.string().min(1).max(200) }).strict(),
    needsApproval: true,
    run: async ({ title }) => `published "${title}"`,
  }),
  defineTool({
    name: 'word_count',
    description: 'Counts the words of a text.',
    input: z.object({ text: z.string() }).strict(),
    run: async ({ text }) => text.split(/\s+/).filter(Boolean).length,
  }),
];

/**
 * Looks a tool up and runs it with validated input. An activity's call heartbeats while the tool runs, so
 * it is not timed out however long it takes, and an interrupt reaches it (its `signal`); a call that was
 * interrupted while it ran ends cancelled, whatever the tool did with the signal (SPEC S4.6).
 */
export async function runRegisteredTool(
  tools: readonly ToolDefinition[],
  name: string,
  input: unknown,
): Promise<unknown> {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool)
    throw new KitError(
      ErrorKind.NotFound,
      `no tool named ${name}: known tools are ${tools.map((t) => t.name).join(', ')}`,
    );
  const parsed = parseInput(tool.input, input, `input of tool ${name}`);
  const context = Context.current();
  const { cancellationSignal: signal } = context;
  // A local activity cannot heartbeat (its workflow task waits for it instead).
  const heartbeat = context.info.isLocal ? undefined : setInterval(() => context.heartbeat(), 1000);
  try {
    const output = await untilAbandoned(tool.run(parsed, { signal }), signal, () =>
      context.log.warn(
        `tool ${name} ignored its abort signal for ${abandonAfterAbortMs / 1000} s: its call is reported cancelled and its work left running`,
      ),
    );
    if (signal.aborted) throw interrupted(signal);
    return output;
  } catch (error) {
    throw signal.aborted ? interrupted(signal) : error;
  } finally {
    clearInterval(heartbeat);
  }
}

/** The cancellation an interrupted call ends with (the activity is then reported cancelled). */
const interrupted = (signal: AbortSignal): unknown =>
  signal.reason instanceof Error ? signal.reason : new CancelledFailure('the tool call was interrupted');

/**
 * How long a tool call is waited for once its signal aborted (an interrupt, a close, a stopping worker's
 * grace over) before it is reported cancelled without the tool.
 */
export const abandonAfterAbortMs = 10_000;

/**
 * What `running` settles with, or — when the tool is still running {@link abandonAfterAbortMs} after
 * `signal` aborted — the call's cancellation: a tool that ignores its signal holds no interrupt, close
 * or worker stop for up to its 10-minute limit (its heartbeat would keep the call alive that long).
 */
function untilAbandoned<Output>(
  running: Promise<Output>,
  signal: AbortSignal,
  onAbandon: () => void,
): Promise<Output> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abandoned = new Promise<never>((_, reject) => {
    const onAbort = () => {
      timer = setTimeout(() => {
        onAbandon();
        reject(interrupted(signal));
      }, abandonAfterAbortMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    void running.finally(() => signal.removeEventListener('abort', onAbort)).catch(() => undefined);
  });
  return Promise.race([running, abandoned]).finally(() => clearTimeout(timer));
}
