import type { AgentInterruptReceipt, WaitRequestInput, WaitResult } from '../domain/control';
import type { InteractionAnswer } from '../domain/conversation-schemas';
import type { LiveTarget } from '../domain/live-output';
import type { CallUsage } from '../domain/usage';
import type { TranscriptEntry } from '../domain/transcript';
import type { ToolApproval } from './approval-gate';
import type { InteractionRequest } from './thread-conversation';
import type {
  AgentThread,
  InterAgentMessage,
  RemoteSpawnRequestInput,
  SendMessageRequestInput,
  SpawnRequestInput,
} from '../domain/schemas';

/**
 * The control operations of SPEC S4, bound to the calling thread's scope. The scope is fixed by the
 * host when the controls are made; nothing a kernel passes can change who is calling.
 */
export interface AgentControls {
  spawn(request: SpawnRequestInput): Promise<AgentThread>;
  spawnRemote(request: RemoteSpawnRequestInput): Promise<AgentThread>;
  sendMessage(request: SendMessageRequestInput): Promise<InterAgentMessage>;
  loadThread(threadId: string): Promise<AgentThread | null>;
  listThreads(): Promise<AgentThread[]>;
  wait(request: WaitRequestInput): Promise<WaitResult>;
  interrupt(threadId: string): Promise<AgentInterruptReceipt>;
  close(threadId: string): Promise<AgentThread[]>;
  /** Charges tokens used so far in this turn; throws QuotaExceeded once the budget is spent (SPEC S6.4). */
  charge(tokens: number): Promise<{ remaining: number }>;
  /**
   * SPEC S6.4: charges tokens a turn reports at once (a scripted reply's `tokens`). Throws QuotaExceeded,
   * nothing counted, once the budget is used up; else they count, even past what is left, and a reply
   * that went past it answers its QuotaExceeded as `endsTurn` (the turn must end with it). So a tree
   * passes its budget by less than one reply (workflows/token-allowance.ts `chargeReported`).
   */
  chargeReported(tokens: number): Promise<{ endsTurn?: unknown }>;
  /** SPEC S11.3: a model call's reservation, in runs with the `usageLedger` feature (else `charge`). */
  calls?: CallBudget;
}

/** What one model call holds until it is settled: tokens, and micro-dollars under a budget in dollars. */
export interface CallHold {
  tokens: number;
  microUsd: number;
}

/** SPEC S11.3: a model call holds its most before it starts and settles at what it used. */
export interface CallBudget {
  /**
   * Holds what one call of `model` (the worker's default when none) may use: its input's estimate and
   * its maximum output, in tokens and, under a budget in dollars, at the model's prices. QuotaExceeded
   * (nothing held) when that would pass a budget on the way up.
   */
  reserve(call: { inputTokens: number; outputTokens: number; model?: string | undefined }): Promise<CallHold>;
  /** The call held `held` and used `used` (what its provider reported; none if it failed): the rest is free again. */
  settle(held: CallHold, used: CallUsage | undefined): void;
}

/** What a kernel gets for one turn. */
export interface TurnContext {
  thread: AgentThread;
  turn: number;
  /** Messages delivered since the last turn, in sequence order, as structured envelopes (SPEC S6.2). */
  inbox: InterAgentMessage[];
  controls: AgentControls;
  /**
   * Runs a user tool as an activity (a local one when the worker says the tool is fast).
   * `unlessNeedsApproval`: the activity runs it only when the tool does not declare `needsApproval`, and
   * answers a GatedToolResult (domain/approval-policy.ts).
   */
  runTool(
    name: string,
    input: unknown,
    options?: { local?: boolean; unlessNeedsApproval?: boolean },
  ): Promise<unknown>;
  /**
   * SPEC S11.4: the one approval gate of every kernel's tool calls, in runs with an approval policy
   * (without one, the model kernel asks for `needsApproval` tools itself, as before it).
   */
  approval?: ToolApproval;
  /** Asks a person through the thread's conversation (SPEC S5); unanswered in time, it is denied. */
  ask(request: InteractionRequest): Promise<InteractionAnswer>;
  /** Where a model call streams its text while someone watches (SPEC S10.1): the thread's conversation. */
  live?: Omit<LiveTarget, 'call'>;
  /** Durable per-thread memory of the kernel (carried through continue-as-new). */
  memory: Record<string, string>;
  /** SPEC S11.3: adds what one model call used to the thread's usage ledger. */
  recordUsage(model: string, usage: CallUsage): void;
}

/** A turn's final answer and the tokens it used. */
export interface TurnAnswer {
  text: string;
  tokens: number;
}

/** Runs one turn of a thread (SPEC S1 "kernel"): model calls and tool calls until a final answer. */
export interface Kernel {
  runTurn(context: TurnContext): Promise<TurnAnswer>;
  /** The transcript its model calls last sent under `key`, for the `model-transcript` query. */
  transcript?(key: unknown): TranscriptEntry[] | null;
}
