// SPEC S3.10, S7.5: whatever a provider answers, a model reply stays small in history and in the
// transcript, and one oversized entry never costs a thread the rest of its turn's context.
import { jsonBytes } from '../../domain/bytes';
import {
  boundReply,
  maxReplyCallBytes,
  maxReplyTextBytes,
  maxReplyToolCalls,
  maxToolCallInputBytes,
} from '../../domain/model-reply';
import {
  maxTranscriptBytes,
  transcriptBytes,
  trimTranscript,
  type TranscriptEntry,
} from '../../domain/transcript';

const call = (id: string, input: unknown) => ({ id, name: 'spawn_agent', input });

test('a reply keeps its text and calls when small; past the bounds, text is cut and calls refused', () => {
  const small = { text: 'hello', toolCalls: [call('a', { task: 'x' })] };
  expect(boundReply(small)).toEqual(small);

  const huge = boundReply({
    text: 'é'.repeat(100_000),
    toolCalls: [
      call('big', { task: 'x'.repeat(1 << 20) }),
      call('ok', { task: 'y'.repeat(30_000) }),
      call('ok2', { task: 'y'.repeat(30_000) }),
      call('over', { task: 'z'.repeat(30_000) }),
      call('fine', { task: 'small' }),
    ],
  });
  expect(jsonBytes(huge.text)).toBeLessThanOrEqual(maxReplyTextBytes);
  expect(huge.text).toMatch(/more characters of this reply cut by agents-kit: too large\]$/);
  expect(huge.toolCalls.map(({ id, refused }) => [id, refused !== undefined])).toEqual([
    ['big', true],
    ['ok', false],
    ['ok2', false],
    ['over', true],
    ['fine', false],
  ]);
  expect(huge.toolCalls[0]).toMatchObject({ input: null });
  expect(huge.toolCalls[0]!.refused).toContain(`more than the ${maxToolCallInputBytes} a tool call may take`);
  expect(huge.toolCalls[3]!.refused).toContain(`${maxReplyCallBytes} bytes of input together`);

  const many = boundReply({
    text: '',
    toolCalls: Array.from({ length: maxReplyToolCalls + 2 }, (_, n) => call(`c${n}`, {})),
  });
  expect(many.toolCalls.filter((one) => one.refused).map((one) => one.id)).toEqual([
    `c${maxReplyToolCalls}`,
    `c${maxReplyToolCalls + 1}`,
  ]);
  const labels = boundReply({
    text: '',
    toolCalls: [{ id: 'i'.repeat(5_000), name: 'n'.repeat(5_000), input: 1 }],
  });
  expect(labels.toolCalls[0]!.id.length + labels.toolCalls[0]!.name.length).toBe(400);
});

test('a newest entry too large for the transcript is cut to fit, not dropped with all before it', () => {
  const entries: TranscriptEntry[] = [
    { role: 'user', text: 'the task' },
    { role: 'assistant', text: 'step one', toolCalls: [{ id: '1', name: 'list_agents', input: {} }] },
    { role: 'tool', results: [{ id: '1', name: 'list_agents', output: '[]', isError: false }] },
    {
      role: 'assistant',
      text: 'w'.repeat(200_000),
      toolCalls: [{ id: '2', name: 'spawn_agent', input: { task: 'x'.repeat(300_000) } }],
    },
    { role: 'tool', results: [{ id: '2', name: 'spawn_agent', output: 'e'.repeat(200_000), isError: true }] },
  ];
  const kept = trimTranscript(entries);
  expect(transcriptBytes(kept)).toBeLessThanOrEqual(maxTranscriptBytes);
  expect(kept.map((entry) => entry.role)).toEqual(['user', 'assistant', 'tool']);
  expect(kept[0]).toEqual(entries[0]);
  const [, assistant, tool] = kept as [
    TranscriptEntry,
    Extract<TranscriptEntry, { role: 'assistant' }>,
    Extract<TranscriptEntry, { role: 'tool' }>,
  ];
  expect(assistant.toolCalls[0]).toMatchObject({
    id: '2',
    input: expect.stringMatching(/^\[an input of \d+ bytes, cut/),
  });
  expect(assistant.text).toMatch(/^w+… \[\d+ more characters cut to keep the transcript small\]$/);
  expect(tool.results[0]).toMatchObject({ id: '2', isError: true, output: expect.stringMatching(/^e+… \[/) });
  // What fits is kept whole, as before.
  expect(trimTranscript(entries.slice(0, 3))).toEqual(entries.slice(0, 3));
});
