import { clipJsonBytes, jsonBytes } from './bytes';

/** The most of a model reply's text a call returns (history, transcript), as JSON bytes. */
export const maxReplyTextBytes = 32 * 1024;
/** The most one tool call's input may take, as JSON; a larger call is refused, not run. */
export const maxToolCallInputBytes = 32 * 1024;
/** The most all tool calls of one reply may take together (their inputs, as JSON). */
export const maxReplyCallBytes = 64 * 1024;
/** The most tool calls one reply may make; the rest are refused. */
export const maxReplyToolCalls = 64;
/** Tool names and call ids past this length are cut (a provider's are far shorter). */
const maxCallLabel = 200;

/** A tool call as the model made it, and the reason it is refused without running, if it is. */
export interface BoundedCall {
  id: string;
  name: string;
  input: unknown;
  refused?: string;
}

/**
 * SPEC S3.10, S7.5: a model's reply bounded before it leaves the activity, so no reply can make a
 * history payload or a transcript entry larger than a few tens of KiB, whatever the provider sends:
 * its text is cut (with a note), and a tool call whose input is too large, or past the reply's count or
 * bytes, keeps no input and is refused with a reason the model then reads as the call's error result.
 */
export function boundReply<Call extends { id: string; name: string; input: unknown }>(answer: {
  text: string;
  toolCalls: readonly Call[];
}): { text: string; toolCalls: (Call & BoundedCall)[] } {
  const note = (cut: number) => `… [${cut} more characters of this reply cut by agents-kit: too large]`;
  let spent = 0;
  const toolCalls = answer.toolCalls.map((call, index) => {
    const label = { id: call.id.slice(0, maxCallLabel), name: call.name.slice(0, maxCallLabel) };
    const bytes = jsonBytes(JSON.stringify(call.input ?? null));
    const refused =
      index >= maxReplyToolCalls
        ? `one reply may make at most ${maxReplyToolCalls} tool calls; this was call ${index + 1}: not run, make it again`
        : bytes > maxToolCallInputBytes
          ? `this call's input is ${bytes} bytes, more than the ${maxToolCallInputBytes} a tool call may take: not run; send less (split the work, or pass a reference instead of the content)`
          : spent + bytes > maxReplyCallBytes
            ? `the tool calls of one reply may take ${maxReplyCallBytes} bytes of input together; this one would pass it: not run, make it again`
            : undefined;
    if (refused) return { ...call, ...label, input: null, refused };
    spent += bytes;
    return { ...call, ...label };
  });
  return { text: clipJsonBytes(answer.text, maxReplyTextBytes, note), toolCalls };
}
