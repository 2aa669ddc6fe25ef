import { z } from 'zod';
import { clipJsonBytes, jsonBytes } from './bytes';
import { LiveTarget } from './live-output';
import { CallUsage } from './usage';

/** One tool call a model asked for. */
export const ModelToolCall = z.object({ id: z.string(), name: z.string(), input: z.unknown() }).strict();
export type ModelToolCall = z.infer<typeof ModelToolCall>;

/** A thread's model conversation, in a provider-neutral form (converted to the provider's in the activity). */
export const TranscriptEntry = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), text: z.string() }).strict(),
  z.object({ role: z.literal('assistant'), text: z.string(), toolCalls: z.array(ModelToolCall) }).strict(),
  z
    .object({
      role: z.literal('tool'),
      results: z.array(
        z.object({ id: z.string(), name: z.string(), output: z.string(), isError: z.boolean() }).strict(),
      ),
    })
    .strict(),
]);
export type TranscriptEntry = z.infer<typeof TranscriptEntry>;

/**
 * What a call's `transcript` extends (the `transcriptDelta` feature): the first `from` entries are the
 * ones sent under `key` before, which the model activity's worker keeps; `from` 0: the transcript is
 * whole, to be kept under `key`.
 */
export const TranscriptBase = z
  .object({ key: z.string().min(1).max(200), from: z.number().int().min(0).max(1_000_000) })
  .strict();
export type TranscriptBase = z.infer<typeof TranscriptBase>;

/** A model call: the activity adds the definitions of the agent-control tools and the allowed user tools. */
export const ModelCallInput = z
  .object({
    threadId: z.string(),
    model: z.string().optional(),
    system: z.string(),
    transcript: z.array(TranscriptEntry),
    transcriptBase: TranscriptBase.optional(),
    agentTools: z.boolean(),
    userTools: z.array(z.string()),
    /** Where the call streams its text while someone watches (SPEC S10.1); absent: it streams nowhere. */
    live: LiveTarget.optional(),
    /** Which call of the thread this is: tool lists are fetched once a turn (SPEC S11.1). */
    call: z
      .object({ turn: z.number().int().min(0), step: z.number().int().min(0) })
      .strict()
      .optional(),
    /** The most the model may answer (SPEC S11.3: the call's reservation counts on it). */
    maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();
export type ModelCallInput = z.infer<typeof ModelCallInput>;

export const ModelCallOutput = z
  .object({
    text: z.string(),
    toolCalls: z.array(
      ModelToolCall.extend({
        needsApproval: z.boolean(),
        /** The worker's tool is fast: run it as a local activity (ToolDefinition.local). */
        local: z.boolean().optional(),
        /** Why the call is not run (its input too large: domain/model-reply.ts); the model reads it. */
        refused: z.string().max(1_000).optional(),
      }),
    ),
    tokens: z.number().int().min(0),
    /** SPEC S11.3: input and output apart, and the cost at the worker's prices (absent in older histories). */
    usage: CallUsage.optional(),
    model: z.string(),
    scripted: z.boolean(),
  })
  .strict();
export type ModelCallOutput = z.infer<typeof ModelCallOutput>;

/** How large one tool output may be in the transcript before it is cut (the rest is summarised as a note). */
export const maxToolOutputChars = 16_000;
/**
 * The transcript sent in one model call, and kept in the thread's memory, stays well under Temporal's
 * payload limit (SPEC S7.5, S3.10): bytes as it is carried, a JSON string inside the memory's JSON.
 */
export const maxTranscriptBytes = 144 * 1024;

/** Each entry's carried size, computed once: a turn trims the same entries at every step. */
const sizes = new WeakMap<TranscriptEntry, number>();
const sizeOf = (entry: TranscriptEntry): number => {
  let size = sizes.get(entry);
  if (size === undefined) sizes.set(entry, (size = jsonBytes(JSON.stringify(entry))));
  return size;
};

/**
 * The first entry (the task, or the fork's first message) within half the limit: its text is cut to a
 * quarter of it as JSON, and encoding it once more (in the memory) at most doubles that.
 */
function clippedFirst(first: TranscriptEntry, limit: number): TranscriptEntry {
  if (first.role === 'tool' || sizeOf(first) <= limit / 2) return first;
  const note = (cut: number) => `… [${cut} more characters cut to keep the transcript small]`;
  return { ...first, text: clipJsonBytes(first.text, Math.floor(limit / 4), note) };
}

/**
 * Cuts a long output to `limit` characters with the note that says how much was left out (the note
 * counts: a turn's result cut to exactly the limit, plus its note, was refused by its conversation and
 * lost), so one result cannot fill the payload.
 */
export function clipOutput(output: string, limit = maxToolOutputChars): string {
  if (output.length <= limit) return output;
  const note = (omitted: number) => `\n…[${omitted} more characters omitted by agents-kit: output too large]`;
  // The note's length depends on the count it names; the longest count is the whole output's.
  const kept = Math.max(0, limit - note(output.length).length);
  return `${output.slice(0, kept)}${note(output.length - kept)}`;
}

/**
 * Entries too large for `budget` bytes together, cut to fit: each text, tool output and tool call input
 * to an even share (inputs replaced by a note saying their size); nothing when even that does not fit.
 */
function shrunk(group: TranscriptEntry[], budget: number): TranscriptEntry[] {
  const parts = group.reduce(
    (count, entry) =>
      count +
      (entry.role === 'assistant'
        ? 1 + entry.toolCalls.length
        : entry.role === 'tool'
          ? entry.results.length
          : 1),
    0,
  );
  // A quarter of an even share: the entries' own JSON, and the memory's encoding of it once more.
  const share = Math.max(0, Math.floor(budget / (4 * parts)));
  const note = (cut: number) => `… [${cut} more characters cut to keep the transcript small]`;
  const cut = (text: string) => clipJsonBytes(text, share, note);
  const cutInput = (input: unknown) => {
    const bytes = jsonBytes(JSON.stringify(input ?? null));
    return bytes <= share ? input : `[an input of ${bytes} bytes, cut to keep the transcript small]`;
  };
  const result = group.map((entry): TranscriptEntry => {
    if (entry.role === 'user') return { ...entry, text: cut(entry.text) };
    if (entry.role === 'assistant')
      return {
        ...entry,
        text: cut(entry.text),
        toolCalls: entry.toolCalls.map((call) => ({ ...call, input: cutInput(call.input) })),
      };
    return { ...entry, results: entry.results.map((one) => ({ ...one, output: cut(one.output) })) };
  });
  return transcriptBytes(result) <= budget ? result : [];
}

/** The bytes a transcript takes as JSON (each entry's size computed once, as trimming does). */
export const transcriptBytes = (entries: readonly TranscriptEntry[]): number =>
  entries.reduce((total, entry) => total + sizeOf(entry), 0);

/**
 * The transcript to keep and send (SPEC S7.5): the first user message (the task) and as many recent
 * entries as fit in `limit` bytes, never splitting a tool call from its results; the newest, when it
 * does not fit alone, cut to fit rather than dropped with everything before it.
 */
export function trimTranscript(
  entries: readonly TranscriptEntry[],
  limit = maxTranscriptBytes,
): TranscriptEntry[] {
  if (entries.length === 0) return [];
  const first = clippedFirst(entries[0]!, limit);
  const rest = entries.slice(1);
  let budget = limit - sizeOf(first);
  const kept: TranscriptEntry[] = [];
  for (let index = rest.length - 1; index >= 0; index--) {
    const entry = rest[index]!;
    // A tool result block travels with the assistant message that asked for it.
    const group =
      entry.role === 'tool' && index > 0 && rest[index - 1]!.role === 'assistant'
        ? [rest[index - 1]!, entry]
        : [entry];
    const size = group.reduce((total, member) => total + sizeOf(member), 0);
    if (size > budget) {
      // The newest entries never give way to nothing: cut to fit, they stay (older ones cannot fit now).
      if (kept.length === 0) kept.unshift(...shrunk(group, budget));
      break;
    }
    budget -= size;
    kept.unshift(...group);
    if (group.length === 2) index--;
  }
  // A transcript never starts with tool results whose call was dropped.
  while (kept[0]?.role === 'tool') kept.shift();
  return [first, ...kept];
}
