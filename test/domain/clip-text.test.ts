import { clipOutput } from '../../domain/transcript';
import fc from 'fast-check';
import { clipJsonBytes, jsonBytes } from '../../domain/bytes';
import { carriedResultBytes, fitMemory } from '../../domain/carry-bounds';
import { clipText } from '../../domain/run-snapshot';
import { ThreadWatch } from '../../workflows/thread-watch';
import type { AgentThread } from '../../domain/schemas';

test('clipText keeps short texts, cuts long ones with a note, and is idempotent', () => {
  expect(clipText('short', 10)).toBe('short');
  const clipped = clipText('x'.repeat(5_000), 1_000);
  expect(clipped).toMatch(
    /^x{1000}… \[4000 more characters clipped in the root run's registry .*full text\]$/,
  );
  expect(clipText(clipped, 1_000)).toBe(clipped);
  expect(clipText(clipped, 500).startsWith('x'.repeat(500) + '… [')).toBe(true);
});

test('a thread’s change log stays small in its snapshot however long its turn results are', () => {
  const watch = new ThreadWatch();
  const thread = (turn: number): AgentThread => ({
    id: 'thread_00000000000000000000000000000001',
    rootId: 'thread_00000000000000000000000000000000',
    parentId: 'thread_00000000000000000000000000000000',
    conversationId: 'conversation_00000000000000000000000000000001',
    name: 'writer',
    path: '/root/writer',
    depth: 1,
    status: turn % 2 ? 'running' : 'idle',
    taskQueue: 'q',
    task: 'write',
    tools: [],
    turnsStarted: Math.ceil(turn / 2),
    turnsCompleted: Math.floor(turn / 2),
    latestTurn: {
      turn: Math.max(1, Math.floor(turn / 2)),
      status: 'completed',
      result: `${turn} ${'w'.repeat(100_000)}`,
      tokens: 0,
      endedAt: 'now',
    },
    createdAt: 'then',
    updatedAt: 'now',
  });
  for (let turn = 1; turn <= 200; turn++) watch.record(thread(turn));
  const snapshot = watch.snapshot();
  expect(snapshot.changes).toHaveLength(64);
  expect(JSON.stringify(snapshot).length).toBeLessThan(256 * 1024);
  // The latest change keeps its result whole while the run lasts, and 16 KiB of it in the snapshot.
  expect(jsonBytes(snapshot.changes.at(-1)?.latestTurn?.result)).toBeLessThanOrEqual(carriedResultBytes);
  expect(snapshot.changes.at(-1)?.latestTurn?.result).toMatch(
    /^200 w+… \[\d+ more characters clipped in a continue-as-new/,
  );
  expect(snapshot.changes.at(-2)?.latestTurn?.result).toMatch(/clipped in an older change/);
  // A restored log (earlier runs kept every result whole) is clipped too.
  const restored = new ThreadWatch({
    changes: snapshot.changes.map((change) => ({
      ...change,
      latestTurn: { ...change.latestTurn!, result: 'z'.repeat(50_000) },
    })),
  });
  expect(JSON.stringify(restored.snapshot()).length).toBeLessThan(256 * 1024);
});

test('clipJsonBytes cuts by bytes as JSON carries them (escapes and multi-byte characters included), keeps pairs whole, and is idempotent', () => {
  const note = (cut: number) => `… [${cut} cut]`;
  for (const unit of ['a', '"', '\u0001', 'é', '✓', '😀']) {
    const text = unit.repeat(10_000);
    const clipped = clipJsonBytes(text, 1_000, note);
    expect(jsonBytes(clipped)).toBeLessThanOrEqual(1_000);
    expect(jsonBytes(clipped)).toBeGreaterThan(900);
    expect(clipped).toMatch(/… \[\d+ cut\]$/);
    expect(clipJsonBytes(clipped, 1_000, note)).toBe(clipped);
    expect(clipped.replace(/… \[\d+ cut\]$/, '').length % unit.length).toBe(0);
  }
  expect(clipJsonBytes('short', 1_000, note)).toBe('short');
});

test('fitMemory drops entries oldest first, the transcript last, until the memory fits', () => {
  const memory = { 'label:a': 'x'.repeat(600), transcript: 't'.repeat(500), paths: 'p'.repeat(600) };
  expect(fitMemory(memory, 10_000)).toBe(memory);
  expect(Object.keys(fitMemory(memory, 1_200))).toEqual(['transcript', 'paths']);
  expect(Object.keys(fitMemory(memory, 600))).toEqual(['transcript']);
  expect(fitMemory(memory, 100)).toEqual({});
});

/** The plain definition clipJsonBytes must agree with: the longest start that fits, by binary search. */
function clipByDefinition(text: string, maxBytes: number, note: (cut: number) => string): string {
  if (jsonBytes(text) <= maxBytes) return text;
  const start = (length: number) =>
    length > 0 && (text.charCodeAt(length - 1) & 0xfc00) === 0xd800
      ? text.slice(0, length - 1)
      : text.slice(0, length);
  const clipped = (length: number) => start(length) + note(text.length - start(length).length);
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (jsonBytes(clipped(middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  return clipped(low);
}

test('clipJsonBytes keeps the longest start that fits, for any text (property, 500 runs)', () => {
  const note = (cut: number) => `… [${cut} more]`;
  const unit = fc.constantFrom('a', '"', '\\', '\n', '\u0001', 'é', '✓', '😀', '\ud800', '\udc00', ' ');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 400 }), fc.integer({ min: 0, max: 1_200 }), (units, maxBytes) => {
      const text = units.join('');
      expect(clipJsonBytes(text, maxBytes, note)).toBe(clipByDefinition(text, maxBytes, note));
    }),
    { numRuns: 500 },
  );
});

test('a clipped output with its note stays within its limit (a longer turn result was refused by its conversation)', () => {
  for (const length of [100_001, 100_050, 250_000, 10_000_000]) {
    const clipped = clipOutput('x'.repeat(length), 100_000);
    expect(clipped.length).toBeLessThanOrEqual(100_000);
    expect(clipped).toMatch(new RegExp(`…\\[${length - clipped.indexOf('\n')} more characters omitted`));
  }
  expect(clipOutput('short', 100_000)).toBe('short');
});
