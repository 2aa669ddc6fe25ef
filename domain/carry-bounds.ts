import { clipJsonBytes, jsonBytes } from './bytes';
import type { AgentThread, TurnOutcome } from './schemas';

/**
 * SPEC S3.10: what a workflow carries through continue-as-new is bounded in bytes, part by part, so the
 * largest input any workflow can build stays under Temporal's limit with margin. The parts and their
 * sum are computed from the real classes filled to their bounds in `continue-as-new-input.test.ts`.
 */

/** Temporal refuses a workflow input (a continue-as-new's too) over 2 MiB: the run is terminated. */
export const inputLimitBytes = 2 * 1024 * 1024;
/**
 * What the largest continue-as-new input of any workflow stays under, as JSON: the limit less ~12% for
 * what this accounting does not see (payload metadata, an encryption codec's header, nonce and tag).
 */
export const carriedInputBudgetBytes = 1_850_000;

/** The most of one turn's result a thread keeps and reports; the conversation has the text too. */
export const maxTurnResultBytes = 256 * 1024;
/** The most of a turn's result (or error) that travels in a carried thread record or change. */
export const carriedResultBytes = 16 * 1024;
/** The most of a kernel's durable memory (its transcript among it) a thread carries. */
export const maxMemoryBytes = 160 * 1024;

/** What a clipped text ends with: how much was cut, where, and where the whole text is. */
export const clipNote = (what: string) => (cut: number) =>
  `… [${cut} more characters clipped in ${what} to stay under Temporal's payload limit; the thread's conversation has the full text]`;

/** `text` clipped to `maxBytes` of JSON, with a note saying what was cut and where (idempotent). */
export const clipToBytes = (text: string, maxBytes: number, what: string): string =>
  clipJsonBytes(text, maxBytes, clipNote(what));

/** A turn outcome whose result and error message take at most `maxBytes` each. */
export function clipOutcome(outcome: TurnOutcome, maxBytes: number, what: string): TurnOutcome {
  return {
    ...outcome,
    ...(outcome.result === undefined ? {} : { result: clipToBytes(outcome.result, maxBytes, what) }),
    ...(outcome.error
      ? { error: { ...outcome.error, message: clipToBytes(outcome.error.message, maxBytes, what) } }
      : {}),
  };
}

/**
 * A thread's record as its own workflow carries it: its task left out (the input's spec has it whole:
 * {@link restoredThread} puts it back) and its turn results clipped to {@link carriedResultBytes}.
 */
export function carriedThread(thread: AgentThread): AgentThread {
  const what = 'a continue-as-new';
  const { latestTurn, firstTurn, ...rest } = thread;
  return {
    ...rest,
    task: '',
    ...(latestTurn ? { latestTurn: clipOutcome(latestTurn, carriedResultBytes, what) } : {}),
    ...(firstTurn ? { firstTurn: clipOutcome(firstTurn, carriedResultBytes, what) } : {}),
  };
}

/** The thread a carried record stands for, its task taken from the spec it was started with. */
export const restoredThread = (carried: AgentThread, task: string): AgentThread => ({ ...carried, task });

/**
 * A kernel's memory within `maxBytes` of JSON: entries are dropped oldest first (the transcript last,
 * which its kernel trims to fit well before), so a kernel that writes without bound cannot make the
 * thread's continue-as-new input pass Temporal's limit.
 */
export function fitMemory(memory: Record<string, string>, maxBytes = maxMemoryBytes): Record<string, string> {
  if (jsonBytes(memory) <= maxBytes) return memory;
  const keys = Object.keys(memory).sort((a, b) => Number(a === 'transcript') - Number(b === 'transcript'));
  const kept = { ...memory };
  for (const key of keys) {
    if (jsonBytes(kept) <= maxBytes) break;
    delete kept[key];
  }
  return kept;
}
