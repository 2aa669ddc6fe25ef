// SPEC S10.2: one stream of a whole root run. A 3-level tree of 21 threads streams in causal order (each
// thread's events after its spawn); a reader killed and resumed from its cursor 5 times loses nothing
// and repeats nothing against one that read straight through; forged publishes are not in it; after the
// run has ended, the same events are read again from the start.
import type { ScriptStepShape } from '../../domain/schemas';
import { streamTree, type TreeEvent } from '../../client/tree-stream';
import { publishSignal } from '../../domain/conversation-messages';
import { newId, relatedId } from '../../domain/ids';
import { ThreadControls } from '../../client/thread-controls';
import type { ThreadService } from '../../client/thread-service';
import type { Capability } from '../../domain/capability';
import { randomUUID } from 'node:crypto';
import { attachRun, eventually } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('tree');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/** A thread that spawns `names` (each answering at once), waits for them and answers. */
const spawning = (names: string[], leaf: (name: string) => ScriptStepShape[][]): ScriptStepShape[][] => [
  [
    ...names.map((name): ScriptStepShape => ({
      type: 'spawn',
      as: name,
      request: { name, task: `do ${name}`, kernel: { type: 'scripted', turns: leaf(name) } },
    })),
    { type: 'wait', on: names, timeoutMs: 60_000 },
    { type: 'reply', text: `done: ${names.join(',')}` },
  ],
];
const letters = ['a', 'b', 'c', 'd'];

const keyOf = (item: TreeEvent) =>
  `${item.threadId}|${item.event.type === 'notification' ? item.event.id : JSON.stringify(item.event)}`;
const ended = (events: TreeEvent[]) =>
  events.filter(
    (item) =>
      item.event.type === 'notification' &&
      item.event.body.type === 'status' &&
      item.event.body.event === 'thread-end',
  ).length;

/** A publish signal to `conversationId` sent as `from` (a forgery: the conversation must refuse it). */
const publishForged = (conversationId: string, from: unknown) =>
  temporal.client.workflow.getHandle(conversationId).signal(publishSignal, {
    from: from as Capability,
    notifications: [
      {
        id: newId('notification', randomUUID),
        createdAt: new Date().toISOString(),
        body: { type: 'message', text: 'forged' },
      },
    ],
  });

/** Until `count` threads of the run have completed their first turn. */
const firstTurnsDone = (service: ThreadService, count: number) =>
  eventually(
    async () =>
      (await service.rootControls().listThreads()).filter((thread) => thread.turnsCompleted >= 1).length,
    (done) => done === count,
    'every thread’s first turn',
    120_000,
  );

/**
 * Reads the tree until `enough` holds and then nothing more comes for a second, resuming from the last
 * cursor after each of the `killAfter` counts (a reader killed mid-stream, a new one taking its cursor).
 */
async function read(
  rootId: string,
  runKey: string,
  enough: (events: TreeEvent[]) => boolean,
  killAfter: number[] = [],
  subtree: { threadId?: string; rootPath?: string; ancestors?: string[] } = {},
): Promise<TreeEvent[]> {
  return readFrom(
    (options) => streamTree(temporal.client, rootId, { runKey, ...subtree, ...options }),
    enough,
    killAfter,
  );
}

/** {@link read} from any stream: `open` starts one after a cursor. */
async function readFrom(
  open: (options: { signal: AbortSignal; after?: string }) => AsyncGenerator<TreeEvent>,
  enough: (events: TreeEvent[]) => boolean,
  killAfter: number[] = [],
): Promise<TreeEvent[]> {
  const events: TreeEvent[] = [];
  let after: string | undefined;
  for (let round = 0; ; round++) {
    const stop = new AbortController();
    const limit = killAfter[round];
    let quiet: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(quiet);
      if (enough(events)) quiet = setTimeout(() => stop.abort(), 1_000);
    };
    settle();
    let killed = false;
    for await (const item of open({ signal: stop.signal, ...(after ? { after } : {}) })) {
      events.push(item);
      after = item.cursor;
      settle();
      if (limit !== undefined && events.length >= limit) {
        killed = true;
        stop.abort();
        break;
      }
    }
    clearTimeout(quiet);
    if (!killed) return events;
  }
}

test('a 3-level tree of 21 threads streams in causal order, resumable, and readable after the run', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    root: {
      name: 'root',
      task: 'coordinate',
      kernel: {
        type: 'scripted',
        turns: spawning(letters, (name) =>
          spawning(
            letters.map((leaf) => `${name}${leaf}`),
            (leaf) => [
              [
                { type: 'send', to: 'parent', content: `hello from ${leaf}` },
                { type: 'reply', text: `leaf ${leaf}` },
              ],
            ],
          ),
        ),
      },
    },
    grant: { owner: 'tests', maxConcurrent: 50, maxTotal: 50, maxDepth: 3 },
  });
  const runKey = service.capability;
  // All 21 ended, the root last: its shutdown notifications come after its children's ends.
  const allEnded = (events: TreeEvent[]) => ended(events) >= 21;
  const straight = read(service.rootThreadId, runKey, allEnded);
  const resumed = read(service.rootThreadId, runKey, allEnded, [3, 9, 20, 40, 70]);
  // A forged publish to the root's conversation, proven by nobody: in its history, not in the stream.
  const rootConversation = (await service.refreshRoot()).conversationId;
  await publishForged(rootConversation, { ...service.rootCapability, proof: 'f'.repeat(64) });
  await firstTurnsDone(service, 21);
  await service.shutdown();
  const [whole, pieces] = await Promise.all([straight, resumed]);

  const threads = new Set(whole.map((item) => item.threadId));
  expect(threads.size).toBe(21);
  expect(new Set(whole.map((item) => item.path)).size).toBe(21);
  expect(whole.some((item) => item.path === '/root/b/bc')).toBe(true);
  // Nothing lost or repeated across 5 kills: the same events, each once.
  expect(pieces.map(keyOf)).toHaveLength(new Set(pieces.map(keyOf)).size);
  expect(new Set(pieces.map(keyOf))).toEqual(new Set(whole.map(keyOf)));
  for (const events of [whole, pieces]) {
    // Causal: every thread's first event comes after the child-spawned status that names it.
    const spawnedAt = new Map<string, number>();
    events.forEach((item, index) => {
      if (
        item.event.type === 'notification' &&
        item.event.body.type === 'status' &&
        item.event.body.event === 'child-spawned'
      )
        spawnedAt.set(item.event.body.threadId!, index);
    });
    for (const threadId of threads) {
      if (threadId === service.rootThreadId) continue;
      const first = events.findIndex((item) => item.threadId === threadId);
      expect(spawnedAt.get(threadId)).toBeLessThan(first);
    }
    // A thread's own events keep its conversation's order: turn start before turn end.
    const order = (threadId: string) =>
      events
        .filter((item) => item.threadId === threadId && item.event.type === 'notification')
        .map((item) =>
          item.event.type === 'notification' && item.event.body.type === 'status'
            ? item.event.body.event
            : '',
        );
    for (const threadId of threads) {
      const statuses = order(threadId);
      expect(statuses.indexOf('turn-start')).toBeLessThan(statuses.indexOf('turn-end'));
    }
    // Every message a leaf sent to its parent: received after it was sent.
    const sentAt = new Map<string, number>();
    const receivedAt = new Map<string, number>();
    events.forEach((item, index) => {
      if (item.event.type === 'message-sent') sentAt.set(item.event.content, index);
      if (item.event.type === 'message-received') receivedAt.set(item.event.content, index);
    });
    expect(sentAt.size).toBe(16);
    expect([...receivedAt.keys()].sort()).toEqual([...sentAt.keys()].sort());
    for (const [content, index] of receivedAt) expect(sentAt.get(content)).toBeLessThan(index);
  }
  expect(
    whole.some(
      (item) => item.event.type === 'notification' && JSON.stringify(item.event.body).includes('forged'),
    ),
  ).toBe(false);

  // After the run: the same events again, from the start.
  const again = await read(service.rootThreadId, runKey, allEnded);
  expect(new Set(again.map(keyOf))).toEqual(new Set(whole.map(keyOf)));
  // One thread's subtree: /root/b and its four children, nothing else.
  const b = whole.find((item) => item.path === '/root/b')!.threadId;
  const branch = await read(service.rootThreadId, runKey, (events) => ended(events) >= 5, [], {
    threadId: b,
    rootPath: '/root/b',
  });
  expect(new Set(branch.map((item) => item.path))).toEqual(
    new Set(['/root/b', '/root/b/ba', '/root/b/bb', '/root/b/bc', '/root/b/bd']),
  );
  expect(new Set(branch.map(keyOf))).toEqual(
    new Set(whole.filter((item) => item.path.startsWith('/root/b')).map(keyOf)),
  );
}, 240_000);

test('a thread-scoped reader streams its subtree without the run key: its workflow checks the senders', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    root: {
      name: 'root',
      task: 'coordinate',
      kernel: {
        type: 'scripted',
        // The root's own workflow messages the lead (a signal from above the subtree, with a receipt).
        turns: spawning(['lead'], () =>
          spawning(['x', 'y'], (leaf) => [
            [
              { type: 'send', to: 'parent', content: `hello from ${leaf}` },
              { type: 'reply', text: `leaf ${leaf}` },
            ],
          ]),
        ).map((turn) => [turn[0]!, { type: 'send', to: 'lead', content: 'from above' }, ...turn.slice(1)]),
      },
    },
    grant: { owner: 'tests', maxConcurrent: 10, maxTotal: 10, maxDepth: 3 },
  });
  const lead = await eventually(
    async () => (await service.rootControls().listThreads()).find((thread) => thread.name === 'lead'),
    (thread) => thread !== undefined,
    'the lead spawned',
  );
  const controls = new ThreadControls(service.handle, await service.capabilityOf(lead!.id));
  const allEnded = (events: TreeEvent[]) => ended(events) >= 3;
  // Read live, killed and resumed twice, while a forged publish lands in the lead's conversation:
  // one with a made-up proof, one proven but by another thread (the root).
  const scoped = readFrom((options) => controls.streamTree(options), allEnded, [2, 6]);
  const leadConversation = relatedId('conversation', lead!.id);
  // The lead's first task starts its conversation, maybe just after its spawn returned.
  await eventually(
    () =>
      temporal.client.workflow
        .getHandle(leadConversation)
        .describe()
        .then(
          () => true,
          () => false,
        ),
    (started) => started,
    'the lead’s conversation',
  );
  for (const from of [{ ...controls.capability, proof: 'f'.repeat(64) }, service.rootCapability])
    await publishForged(leadConversation, from);
  await firstTurnsDone(service, 4);
  await service.shutdown();
  const events = await scoped;
  expect(new Set(events.map((item) => item.path))).toEqual(
    new Set(['/root/lead', '/root/lead/x', '/root/lead/y']),
  );
  expect(events.map(keyOf)).toHaveLength(new Set(events.map(keyOf)).size);
  expect(events.some((item) => JSON.stringify(item.event).includes('forged'))).toBe(false);
  // The same events as the run key's holder reads for that subtree.
  const keyed = await read(service.rootThreadId, service.capability, allEnded, [], {
    threadId: lead!.id,
    rootPath: '/root/lead',
    ancestors: [service.rootThreadId],
  });
  expect(new Set(events.map(keyOf))).toEqual(new Set(keyed.map(keyOf)));
  expect(events.filter((item) => item.event.type === 'message-received')).toHaveLength(3);
  // Read again once the run has ended, with receipts waiting for their sends as long as the test
  // lasts: the one from above the subtree must go without one (its send is never in this stream). The
  // read waits for all three receipts, not only the ends: on a loaded cluster a thread's mailbox history
  // was once read more than the read's 1 s of quiet after the last end (the test then failed).
  const received = (items: TreeEvent[]) =>
    items.filter((item) => item.event.type === 'message-received').length;
  const again = await readFrom(
    (options) => controls.streamTree({ ...options, receiptWaitMs: 3_600_000 }),
    (items) => allEnded(items) && received(items) >= 3,
  );
  expect(again.some((item) => JSON.stringify(item.event).includes('from above'))).toBe(true);
  // A capability whose proof does not match is refused by the thread's workflow.
  const forged = new ThreadControls(service.handle, { ...controls.capability, proof: 'e'.repeat(64) });
  const refused = (async () => {
    for await (const item of forged.streamTree({ signal: AbortSignal.timeout(60_000), rootPath: '/x' }))
      void item;
  })();
  await expect(refused).rejects.toMatchObject({ kind: 'PermissionDenied' });
}, 240_000);
