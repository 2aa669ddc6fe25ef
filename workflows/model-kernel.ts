import { ActivityCancellationType, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { agentTools, isAgentToolName, type AgentToolName } from '../domain/operations';
import { ErrorKind, KitError, kitErrorFromFailure, parseInput } from '../domain/errors';
import type { AgentSpec, AgentThread, InterAgentMessage } from '../domain/schemas';
import { jsonBytes } from '../domain/bytes';
import {
  clipOutput,
  TranscriptEntry,
  transcriptBytes,
  trimTranscript,
  type ModelCallInput,
  type ModelCallOutput,
} from '../domain/transcript';
import { callReservation, defaultMaxOutputTokens, type CallUsage } from '../domain/usage';
import { deniedOutput } from './approval-gate';
import type { CallBudget, Kernel, TurnAnswer, TurnContext } from './kernel';
import { TranscriptSender } from './transcript-sender';
import { patches } from './patches';

const { callModel } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  // An interrupt aborts the provider request itself (the activity passes its cancellation signal on).
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [
      'Protocol',
      'PermissionDenied',
      'QuotaExceeded',
      'NotFound',
      'Unsupported',
      'InvalidState',
    ],
  },
});

type ModelKernelSpec = Extract<NonNullable<AgentSpec['kernel']>, { type: 'model' }>;
type ToolCall = ModelCallOutput['toolCalls'][number];

/** SPEC S6.2: an inbound message as a structured envelope, never as a text prefix of the body. */
export const envelope = (message: InterAgentMessage): string =>
  JSON.stringify({
    type: 'agent_message',
    message_id: message.id,
    from: message.sender,
    seq: message.seq,
    sent_at: message.sentAt,
    content: message.content,
  });

/**
 * The model loop of SPEC S6.1: model call (an activity) → tool calls → model call … until a final answer.
 * Agent-control tools run here, in workflow code; user tools run as activities. The transcript lives in
 * the thread's durable memory, trimmed so no payload grows past Temporal's limits (SPEC S7.5).
 */
export class ModelKernel implements Kernel {
  /** With the `transcriptDelta` feature: calls carry what their worker does not keep of the transcript. */
  private readonly sender: TranscriptSender | undefined;
  /** What the last turn of this run left in the memory, and its entries (with the sender only). */
  private lastTurn: { text: string; entries: TranscriptEntry[] } | undefined;

  constructor(
    private readonly spec: AgentSpec,
    private readonly options: ModelKernelSpec,
    features: { transcriptDelta?: boolean } = {},
  ) {
    this.sender = features.transcriptDelta ? new TranscriptSender(() => workflowInfo().runId) : undefined;
  }

  /** The `model-transcript` query's answer (workflows/transcript-sender.ts). */
  transcript(key: unknown): TranscriptEntry[] | null {
    return this.sender?.lookup(key) ?? null;
  }

  /** A call's input as it is sent: the transcript whole, or what follows what its worker keeps. */
  private carried(request: ModelCallInput): ModelCallInput {
    return this.sender ? { ...request, ...this.sender.send(request.transcript) } : request;
  }

  async runTurn(context: TurnContext): Promise<TurnAnswer> {
    const transcript = this.remembered(context.memory.transcript);
    if (context.turn === 1) {
      for (const entry of this.spec.history ?? []) {
        transcript.push(
          entry.role === 'user'
            ? { role: 'user', text: entry.text }
            : { role: 'assistant', text: entry.text, toolCalls: [] },
        );
      }
      transcript.push({ role: 'user', text: this.spec.task });
    }
    for (const message of context.inbox) transcript.push({ role: 'user', text: envelope(message) });
    // Remembered once the turn is over, however it ends (answered, failed or interrupted): a thread
    // continues as new only between turns, so nothing reads the memory mid-turn, and serializing a
    // transcript of up to 144 KiB after every model call and tool result was the step's own cost.
    try {
      return await this.steps(context, transcript);
    } finally {
      const kept = trimTranscript(transcript);
      context.memory.transcript = JSON.stringify(kept);
      if (this.sender) this.lastTurn = { text: context.memory.transcript, entries: kept };
    }
  }

  /**
   * The transcript the thread's memory holds. With `transcriptDelta`, the entries of this run's last turn
   * when the memory is still what that turn left (the same string): no parse, and the same entries, so
   * the turn's first call extends what was sent before instead of sending it all again.
   */
  private remembered(text: string | undefined): TranscriptEntry[] {
    if (!text) return [];
    if (this.lastTurn?.text === text) return [...this.lastTurn.entries];
    return TranscriptEntry.array().parse(JSON.parse(text));
  }

  private async steps(context: TurnContext, transcript: TranscriptEntry[]): Promise<TurnAnswer> {
    for (let step = 0; step < this.options.maxSteps; step++) {
      const request: ModelCallInput = {
        threadId: context.thread.id,
        ...(this.spec.model ? { model: this.spec.model } : {}),
        system: systemPrompt(context.thread, this.spec),
        transcript: trimTranscript(transcript),
        agentTools: true,
        userTools: context.thread.tools,
        ...(context.live ? { live: { ...context.live, call: { turn: context.turn, step } } } : {}),
      };
      const output = context.controls.calls
        ? await this.reservedCall(context, context.controls.calls, request, step)
        : await callModel(this.carried(request));
      transcript.push({
        role: 'assistant',
        text: output.text,
        toolCalls: output.toolCalls.map(({ id, name, input }) => ({ id, name, input })),
      });
      // Before the usage ledger: charged as it is used, a spent budget ending the turn (SPEC S6.4).
      if (output.tokens > 0 && !output.usage) await context.controls.charge(output.tokens);
      if (output.toolCalls.length === 0) return { text: output.text, tokens: 0 };
      const results = [];
      for (const call of output.toolCalls) results.push(await this.runToolCall(call, context, transcript));
      transcript.push({ role: 'tool', results });
    }
    return { text: `(stopped after ${this.options.maxSteps} model calls without a final answer)`, tokens: 0 };
  }

  /**
   * SPEC S11.3: the call holds its reservation (its maximum output and its input's estimate) before it
   * starts, so no call in flight can pass a budget; QuotaExceeded ends the turn without calling. Once it
   * answers, the ledger gets what the provider reported and the rest of the reservation is free again.
   */
  private async reservedCall(context: TurnContext, calls: CallBudget, request: ModelCallInput, step: number) {
    const maxOutputTokens = this.options.maxOutputTokens ?? defaultMaxOutputTokens;
    const promptBytes = jsonBytes(request.system) + transcriptBytes(request.transcript);
    const held = await calls.reserve({
      ...callReservation(promptBytes, request.userTools.length, maxOutputTokens),
      model: this.spec.model,
    });
    let used: CallUsage | undefined;
    try {
      const output = await callModel({
        ...this.carried(request),
        call: { turn: context.turn, step },
        maxOutputTokens,
      });
      const usage = output.usage ?? { inputTokens: 0, outputTokens: output.tokens, costUsd: 0 };
      context.recordUsage(output.model, usage);
      used = usage;
      return { ...output, usage };
    } finally {
      // A failed or interrupted call reported nothing: what it held is free again.
      calls.settle(held, used);
    }
  }

  /** Runs one tool call; a failure becomes a tool result the model can act on, not a crash. */
  private async runToolCall(call: ToolCall, context: TurnContext, transcript: TranscriptEntry[]) {
    try {
      if (call.refused) throw new KitError(ErrorKind.QuotaExceeded, `${call.name}: ${call.refused}`);
      const denied = await deniedReason(call, context);
      if (denied !== undefined)
        return { id: call.id, name: call.name, output: JSON.stringify(deniedOutput(denied)), isError: true };
      const output = isAgentToolName(call.name)
        ? await runAgentTool(call.name, call.input, context, transcript)
        : await context.runTool(call.name, call.input, call.local ? { local: true } : {});
      return {
        id: call.id,
        name: call.name,
        output: clipOutput(typeof output === 'string' ? output : JSON.stringify(output)),
        isError: false,
      };
    } catch (error) {
      const kitError = kitErrorFromFailure(error);
      if (!kitError) throw error;
      return {
        id: call.id,
        name: call.name,
        output: JSON.stringify({ error: { kind: kitError.kind, message: kitError.message } }),
        isError: true,
      };
    }
  }
}

/**
 * SPEC S6.1, S11.4: why a call may not run (a person denied it, or nobody answered in time), undefined
 * when it may. Through the tree's approval gate in runs that have one; before it, a `needsApproval` tool
 * was asked for here.
 */
async function deniedReason(call: ToolCall, context: TurnContext): Promise<string | undefined> {
  if (context.approval) {
    const verdict = await context.approval.check({
      name: call.name,
      input: call.input,
      declared: call.needsApproval,
    });
    return verdict.approved === true
      ? undefined
      : verdict.approved === false
        ? verdict.reason
        : 'no approval';
  }
  if (!call.needsApproval) return undefined;
  const answer = await context.ask({
    kind: 'approval',
    prompt: `${context.thread.path} wants to run ${call.name}`,
    tool: { name: call.name, input: call.input },
  });
  if (answer.type === 'approval' && answer.approved) return undefined;
  return answer.type === 'approval' ? (answer.reason ?? 'no reason given') : 'no approval';
}

function systemPrompt(thread: AgentThread, spec: AgentSpec): string {
  const role = thread.parentId
    ? `You are agent ${thread.path} (${thread.id}), a sub-agent; your parent is ${thread.parentId}. Finish your task and give a concise final answer.`
    : `You are agent ${thread.path} (${thread.id}), the root agent of an agents-kit tree. Delegate with spawn_agent when parallel work helps, wait_agents for results, then answer.`;
  return [
    role,
    'Messages from other agents arrive as JSON envelopes of type agent_message.',
    spec.instructions,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The history a forked child starts with: user and assistant text only, never tool traffic (SPEC S4.1). */
function forkHistory(
  transcript: TranscriptEntry[],
  mode: 'none' | 'full' | 'last_turn',
): NonNullable<AgentSpec['history']> {
  if (mode === 'none') return [];
  const lastUser = transcript.map((entry) => entry.role).lastIndexOf('user');
  const from = mode === 'full' ? transcript : transcript.slice(Math.max(0, lastUser));
  return from.flatMap((entry) =>
    entry.role === 'tool' || !entry.text ? [] : [{ role: entry.role, text: entry.text }],
  );
}

/**
 * A model's wait on its own thread (it can never end while the model runs it) or interrupt of its own
 * turn (the root's controls may: the service's root authority) is refused, as its tools describe them.
 * Before, the wait blocked to its timeout and the interrupt ended the turn without an answer. Asked only
 * when a call names the thread itself.
 */
function checkNotSelf(tool: AgentToolName, ids: readonly string[], self: string): void {
  if (!ids.includes(self) || !patched(patches.modelToolsSpareSelf)) return;
  throw new KitError(
    tool === 'wait_agents' ? ErrorKind.InvalidState : ErrorKind.PermissionDenied,
    tool === 'wait_agents'
      ? `wait_agents: ${self} is you: your own turn cannot end while you wait for it; wait for other agents, or answer`
      : `interrupt_agent: you may only interrupt your descendants, not yourself (${self}); to stop, answer`,
  );
}

async function runAgentTool(
  name: AgentToolName,
  rawInput: unknown,
  { controls, memory, thread }: TurnContext,
  transcript: TranscriptEntry[],
): Promise<unknown> {
  const paths: Record<string, string> = memory.paths
    ? (JSON.parse(memory.paths) as Record<string, string>)
    : {};
  const remember = (thread: AgentThread) => {
    paths[thread.id] = thread.path;
    memory.paths = JSON.stringify(paths);
  };
  // Listings for a model leave out prompts, history and result bodies (SPEC S4.4).
  const brief = (thread: AgentThread) => ({
    id: thread.id,
    name: thread.name,
    path: thread.path,
    status: thread.status,
    turns: thread.turnsCompleted,
  });
  switch (name) {
    case 'spawn_agent': {
      const input = parseInput(agentTools.spawn_agent.input, rawInput, 'spawn_agent input');
      const fork = input.fork ?? 'none';
      const thread = await controls.spawn({
        task: input.task,
        ...(input.name ? { name: input.name } : {}),
        ...(input.instructions ? { instructions: input.instructions } : {}),
        ...(input.tools ? { tools: input.tools } : {}),
        kernel: { type: 'model' },
        history: forkHistory(transcript, fork),
        fork: fork === 'last_turn' ? { type: 'lastTurns', n: 1 } : { type: fork },
      });
      remember(thread);
      return brief(thread);
    }
    case 'send_agent_message': {
      const input = parseInput(agentTools.send_agent_message.input, rawInput, 'send_agent_message input');
      const message = await controls.sendMessage({
        recipient: input.recipient,
        content: input.content,
        triggerTurn: input.trigger_turn ?? false,
      });
      return { message_id: message.id, seq: message.seq };
    }
    case 'wait_agents': {
      const input = parseInput(agentTools.wait_agents.input, rawInput, 'wait_agents input');
      checkNotSelf(name, input.ids, thread.id);
      const result = await controls.wait({ threadIds: input.ids, timeoutMs: input.timeout_ms ?? 30_000 });
      return {
        timed_out: result.timedOut,
        outcomes: result.outcomes.map((outcome) => ({
          id: outcome.threadId,
          path: paths[outcome.threadId] ?? outcome.threadId,
          status: outcome.status,
          ...(outcome.latestTurn?.result !== undefined ? { result: outcome.latestTurn.result } : {}),
          ...(outcome.latestTurn?.error ? { error: outcome.latestTurn.error } : {}),
        })),
      };
    }
    case 'list_agents':
      parseInput(agentTools.list_agents.input, rawInput, 'list_agents input');
      return (await controls.listThreads()).map(brief);
    case 'interrupt_agent': {
      const { id } = parseInput(agentTools.interrupt_agent.input, rawInput, 'interrupt_agent input');
      checkNotSelf(name, [id], thread.id);
      return controls.interrupt(id);
    }
    case 'close_agent':
      return (
        await controls.close(parseInput(agentTools.close_agent.input, rawInput, 'close_agent input').id)
      ).map(brief);
  }
}
