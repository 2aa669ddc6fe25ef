import { TranscriptCache } from '../../activities/transcript-cache';
import type { ModelCallInput, TranscriptEntry } from '../../domain/transcript';
import { TranscriptSender } from '../../workflows/transcript-sender';

const user = (text: string): TranscriptEntry => ({ role: 'user', text });
const call = (input: Partial<ModelCallInput>): ModelCallInput => ({
  threadId: 'thread_a',
  system: 'be brief',
  transcript: [],
  agentTools: false,
  userTools: [],
  ...input,
});
const noClient = () => {
  throw new Error('no client here');
};

test('the sender sends a transcript whole under a new key, then only what extends it', () => {
  const sender = new TranscriptSender(() => 'run-1');
  const [a, b, c] = [user('a'), user('b'), user('c')];
  expect(sender.send([a])).toEqual({ transcript: [a], transcriptBase: { key: 'run-1/1', from: 0 } });
  expect(sender.send([a, b, c])).toEqual({ transcript: [b, c], transcriptBase: { key: 'run-1/1', from: 1 } });
  expect(sender.lookup('run-1/1')).toEqual([a, b, c]);
  // Not an extension (a trim dropped b; a turn read from memory has new entries): whole, a new key.
  expect(sender.send([a, c])).toEqual({ transcript: [a, c], transcriptBase: { key: 'run-1/2', from: 0 } });
  expect(sender.send([user('a'), c])).toEqual({
    transcript: [user('a'), c],
    transcriptBase: { key: 'run-1/3', from: 0 },
  });
  expect(sender.lookup('run-1/1')).toBeNull();
  expect(sender.lookup(42)).toBeNull();
});

test('the cache rebuilds a delta from what it keeps, and asks the thread for one it cannot', async () => {
  const cache = new TranscriptCache();
  const base = { key: 'run-1/1', from: 0 };
  await cache.whole(call({ transcript: [user('a')], transcriptBase: base }), noClient);
  const whole = await cache.whole(
    call({ transcript: [user('b')], transcriptBase: { key: 'run-1/1', from: 1 } }),
    noClient,
  );
  expect(whole).toEqual([user('a'), user('b')]);
  // A retried attempt of the same call extends the same count again.
  expect(
    await cache.whole(
      call({ transcript: [user('b')], transcriptBase: { key: 'run-1/1', from: 1 } }),
      noClient,
    ),
  ).toEqual([user('a'), user('b')]);
  // A worker that keeps less than a call extends asks the thread (transcript-delta.test.ts): here is none.
  const unread = await cache
    .whole(call({ transcript: [user('z')], transcriptBase: { key: 'run-1/1', from: 5 } }), noClient)
    .catch((error: unknown) => error);
  expect(unread).toEqual(new Error('no client here'));
});

test('the cache keeps one transcript per thread and stays within its bytes', async () => {
  const cache = new TranscriptCache(200);
  await cache.whole(call({ transcript: [user('a')], transcriptBase: { key: 'k1', from: 0 } }), noClient);
  await cache.whole(call({ transcript: [user('b')], transcriptBase: { key: 'k2', from: 0 } }), noClient);
  expect(cache.size.transcripts).toBe(1); // the thread's new key replaced its old one
  for (let index = 0; index < 20; index++)
    await cache.whole(
      call({
        threadId: `thread_${index}`,
        transcript: [user('x'.repeat(40))],
        transcriptBase: { key: `t${index}`, from: 0 },
      }),
      noClient,
    );
  expect(cache.size.bytes).toBeLessThanOrEqual(200);
  expect(cache.size.transcripts).toBeGreaterThan(0);
});
