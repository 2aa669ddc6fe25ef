/**
 * Where in `value` (a history, a describe response, any proto object) `needle` occurs, as text or
 * inside bytes: the paths, e.g. `$.events[3].workflowExecutionStartedEventAttributes.input.payloads[0].data`.
 * Bytes are recognised across realms (protobufjs's Buffers are not this jest sandbox's Uint8Arrays).
 */
export function occurrences(value: unknown, needle: string, path = '$', found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.includes(needle)) found.push(path);
  } else if (ArrayBuffer.isView(value)) {
    if (Buffer.from(value.buffer, value.byteOffset, value.byteLength).includes(needle)) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => occurrences(item, needle, `${path}[${index}]`, found));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) occurrences(item, needle, `${path}.${key}`, found);
  }
  return found;
}
