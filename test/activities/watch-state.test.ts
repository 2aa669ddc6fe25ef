import { WatchState } from '../../activities/live-output-sink';

test('a conversation read as watched until T counts as watched before T and not after', () => {
  const state = new WatchState();
  state.saw('conversation_a', 2_000, 1_000);
  expect(state.watchedNow('conversation_a', 1_999)).toBe(true);
  expect(state.watchedNow('conversation_a', 2_000)).toBe(false);
  expect(state.watchedNow('conversation_b', 1_000)).toBe(false);
});

test('an unwatched reading lets a call skip waiting only while it is recent, and never once watched', () => {
  const state = new WatchState();
  expect(state.unwatchedWithin('conversation_a', 1_000, 0)).toBe(false); // never read: wait
  state.saw('conversation_a', 0, 10_000);
  expect(state.unwatchedWithin('conversation_a', 1_000, 10_999)).toBe(true);
  expect(state.unwatchedWithin('conversation_a', 1_000, 11_000)).toBe(false);
  state.saw('conversation_a', 20_000, 11_000); // a watcher came
  expect(state.unwatchedWithin('conversation_a', 1_000, 11_500)).toBe(false);
});

test('it says when a conversation was last read, so a call can take a recent reading without a look', () => {
  const state = new WatchState();
  expect(state.readAt('conversation_a')).toBeUndefined();
  state.saw('conversation_a', 0, 10_000);
  state.saw('conversation_a', 0, 10_400);
  expect(state.readAt('conversation_a')).toBe(10_400);
  expect(state.readAt('conversation_b')).toBeUndefined();
});

test('it keeps at most `limit` conversations, forgetting the least recently read', () => {
  const state = new WatchState(2);
  state.saw('conversation_a', 5_000, 0);
  state.saw('conversation_b', 5_000, 0);
  state.saw('conversation_a', 5_000, 1); // read again: now the newest
  state.saw('conversation_c', 5_000, 2);
  expect(state.watchedNow('conversation_a', 3)).toBe(true);
  expect(state.watchedNow('conversation_b', 3)).toBe(false);
  expect(state.watchedNow('conversation_c', 3)).toBe(true);
});
