import fc from 'fast-check';
import { jsonBytes } from '../../domain/bytes';
import {
  LiveOutput,
  maxLiveCarryBytes,
  maxLiveChunkChars,
  maxLiveTextChars,
  type LiveCallId,
  type LiveChunk,
} from '../../domain/live-output';

const from = { rootId: 'thread_root', threadId: 'thread_a', lineage: [], proof: 'p' } as never;
const call = (turn: number, step = 0, attempt = 1): LiveCallId => ({ turn, step, attempt });
const chunk = (at: LiveCallId, offset: number, text: string, end?: LiveChunk['end']): LiveChunk => ({
  from,
  call: at,
  offset,
  text,
  ...(end ? { end } : {}),
});

test('flushes in any order, repeated or lost, heal into the call’s text', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 1, maxLength: 400 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(60)), { maxLength: 60 }),
      (text, sends) => {
        const live = new LiveOutput();
        // A sender resends from what it believes was taken; here from any offset, any length.
        for (const [start, length] of sends) {
          const offset = start % text.length;
          live.write(chunk(call(1), offset, text.slice(offset, offset + length)));
        }
        // Then the sender's honest pass from what the conversation says it has.
        let have = live.read('c', { offset: 0, ended: false }).length;
        while (have < text.length) have = live.write(chunk(call(1), have, text.slice(have, have + 50)));
        const view = live.read('c', { offset: 0, ended: false });
        expect(view.text).toBe(text);
      },
    ),
  );
});

test('a newer call starts over from offset 0 only; an older one changes nothing', () => {
  const live = new LiveOutput();
  live.write(chunk(call(2, 1), 0, 'second step'));
  expect(live.write(chunk(call(2, 0), 0, 'first step'))).toBe(0);
  expect(live.write(chunk(call(3), 5, 'late start'))).toBe(0);
  expect(live.read('c', { offset: 0, ended: false })).toMatchObject({
    call: call(2, 1),
    text: 'second step',
  });
  live.write(chunk(call(2, 1, 2), 0, 'retried'));
  expect(live.read('c', { call: call(2, 1), offset: 11, ended: false })).toMatchObject({
    call: call(2, 1, 2),
    offset: 0,
    text: 'retried',
  });
});

test('an ended call takes nothing more; the end is news to a watcher that has all the text', () => {
  const live = new LiveOutput();
  live.write(chunk(call(1), 0, 'done'));
  const cursor = { call: call(1), offset: 4, ended: false };
  expect(live.hasNewsFor(cursor)).toBe(false);
  live.write(chunk(call(1), 4, '', 'interrupted'));
  expect(live.hasNewsFor(cursor)).toBe(true);
  expect(live.read('c', cursor)).toMatchObject({ text: '', end: 'interrupted', length: 4 });
  expect(live.write(chunk(call(1), 4, ' more'))).toBe(4);
  expect(live.hasNewsFor({ ...cursor, ended: true })).toBe(false);
});

test('a long call keeps its tail; a watcher behind it is told how much was cut', () => {
  const live = new LiveOutput();
  const text = 'abcdefghij'.repeat((maxLiveTextChars / 10) * 3);
  for (let offset = 0; offset < text.length; offset += maxLiveChunkChars)
    live.write(chunk(call(1), offset, text.slice(offset, offset + maxLiveChunkChars)));
  const fresh = live.read('c', { offset: 0, ended: false });
  expect(fresh).toMatchObject({
    length: text.length,
    cut: text.length - maxLiveTextChars,
    offset: fresh.cut,
  });
  expect(fresh.text).toBe(text.slice(-maxLiveTextChars));
  const behind = live.read('c', { call: call(1), offset: 10, ended: false });
  expect(behind.cut).toBe(text.length - maxLiveTextChars - 10);
  expect(behind.text).toBe(fresh.text);
});

test('what is carried through continue-as-new stays within its bytes, however the text encodes', () => {
  for (const unit of ['a', '\u0000', '\ud800', '字', '😀']) {
    const live = new LiveOutput();
    const text = unit.repeat(Math.floor(maxLiveTextChars / unit.length));
    live.write(chunk(call(1), 0, text.slice(0, maxLiveChunkChars)));
    live.write(chunk(call(1), maxLiveChunkChars, text.slice(maxLiveChunkChars)));
    const snapshot = live.snapshot()!;
    expect(jsonBytes(snapshot.text)).toBeLessThanOrEqual(maxLiveCarryBytes);
    expect(snapshot.base + snapshot.text.length).toBe(text.length);
    const next = new LiveOutput(snapshot);
    expect(next.read('c', { call: call(1), offset: text.length, ended: false }).length).toBe(text.length);
  }
});
