// SPEC S2.4: every public entry point of the client API checks what it is given before it sends
// anything: null, missing or mistyped arguments are a Protocol KitError naming what was wrong, never a
// TypeError from deep inside. The client's connection leads nowhere, so a call that got past its checks
// would hang, not pass.
import { Client, Connection } from '@temporalio/client';
import {
  ConversationNotificationReceiver,
  createEncryptionCodec,
  createTracing,
  grpcRetryInterceptor,
  grpcRetryOptions,
  KitError,
  loadCodecKeys,
  publishNotifications,
  publishNotificationsWithReceipt,
  resolveNotification,
  streamTree,
  ThreadService,
  tracingFromEnvironment,
  usageReport,
  watchOutput,
} from '../../client';
import { loadConfig, loadModelConfig } from '../../workers';

const client = new Client({ connection: Connection.lazy({ address: '127.0.0.1:9' }) });
const hex = 'a'.repeat(32);
const threadId = `thread_${hex}`;
const conversationId = `conversation_${hex}`;
const goodAttach = { taskQueue: 'q', owner: 'o', root: { task: 't' }, grant: { owner: 'o' } };

/** What a call fails with, as `kind: message`, within a few seconds (a hang is a failure). */
async function refusal(call: () => unknown): Promise<string> {
  const outcome = await Promise.race([
    (async () => {
      const value = call();
      if (value && typeof value === 'object' && Symbol.asyncIterator in value)
        await (value as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
      else await value;
      return 'no error';
    })().catch((error: unknown) =>
      KitError.is(error) ? `${error.kind}: ${error.message}` : `raw ${String(error)}`,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('still running after 5 s'), 5_000).unref()),
  ]);
  return outcome;
}

const junk: unknown[] = [undefined, null, 0, 'text', [], { body: null }];
const any = (value: unknown) => value as never;

test.each(junk.map((value) => [JSON.stringify(value) ?? 'undefined', value]))(
  'junk (%s) where an object belongs is a Protocol KitError',
  async (_name, value) => {
    const calls: Record<string, () => unknown> = {
      'attach options': () => ThreadService.attach(client, any(value)),
      'attach client': () => ThreadService.attach(any(value), goodAttach),
      'attach grant': () => ThreadService.attach(client, { ...goodAttach, grant: any(value) }),
      'attach root': () => ThreadService.attach(client, { ...goodAttach, root: any(value) }),
      'reopen client': () => ThreadService.reopen(any(value), threadId, 'a'.repeat(64)),
      'receiver options': () => ConversationNotificationReceiver.open(client, conversationId, any(value)),
      'resolve target': () => resolveNotification(client, any(value), { type: 'approval', approved: true }),
      'publish options': () => publishNotifications(client, conversationId, [], any(value)),
      'publish with receipt': () => publishNotificationsWithReceipt(client, conversationId, [], any(value)),
      'watch options': () => watchOutput(client, threadId, any(value)),
      'stream options': () => streamTree(client, threadId, any(value)),
      'codec options': () => createEncryptionCodec(any(value)),
    };
    // `undefined` is the documented default of these; no notifications at all is a valid publish.
    // Their fields are all optional: any object is some.
    if (value !== undefined && !(typeof value === 'object' && value !== null && !Array.isArray(value))) {
      calls['tracing options'] = () => createTracing(any(value));
      calls['tracing environment'] = () => tracingFromEnvironment(any(value));
      calls['codec keys environment'] = () => loadCodecKeys(any(value));
    }
    if (!Array.isArray(value))
      calls['publish notifications'] = () =>
        publishNotifications(client, conversationId, any(value), { taskQueue: 'q' });
    const outcomes = Object.fromEntries(
      await Promise.all(Object.entries(calls).map(async ([name, call]) => [name, await refusal(call)])),
    );
    for (const [name, outcome] of Object.entries(outcomes))
      expect([name, outcome]).toEqual([name, expect.stringMatching(/^Protocol: /)]);
  },
  30_000,
);

test('attach refuses options the root run would refuse, naming each, before starting anything', async () => {
  const bad = {
    continueAsNewAfterEvents: 5,
    shutdownGraceMs: -1,
    taskQueue: '',
    outsideEndsCheckMs: 10,
  } as const;
  for (const [field, value] of Object.entries(bad))
    expect(await refusal(() => ThreadService.attach(client, { ...goodAttach, [field]: value }))).toMatch(
      new RegExp(`^Protocol: invalid attach options: ${field}: `),
    );
});

test('a missing or mistyped part of the attach options is named plainly', async () => {
  const { grant: _grant, ...withoutGrant } = goodAttach;
  expect(await refusal(() => ThreadService.attach(client, any(withoutGrant)))).toBe(
    'Protocol: invalid grant: missing',
  );
  expect(await refusal(() => ThreadService.attach(client, { ...goodAttach, grant: any('o') }))).toBe(
    'Protocol: invalid grant: Invalid input: expected object, received string',
  );
});

test("attach checks the owner's own shape before comparing it with the grant's", async () => {
  expect(await refusal(() => ThreadService.attach(client, { ...goodAttach, owner: any(null) }))).toMatch(
    /^Protocol: invalid owner: /,
  );
  // A huge owner is named, not echoed.
  const huge = await refusal(() =>
    ThreadService.attach(client, { ...goodAttach, owner: 'o'.repeat(1_000_000) }),
  );
  expect(huge).toMatch(/^Protocol: invalid owner: /);
  expect(huge.length).toBeLessThan(1_000);
});

test('a stream cursor of the right JSON but the wrong shape is refused as not a cursor', async () => {
  const signal = new AbortController().signal;
  for (const after of [
    '{"v":1,"threads":{"thread_x":5},"sends":[1]}',
    '{"v":1,"threads":{},"sends":[]}',
    `{"v":1,"threads":{"${threadId}":{"path":"/root","at":{"conversation":null}}},"sends":[]}`,
    '[]',
    'null',
  ])
    expect(await refusal(() => streamTree(client, threadId, { runKey: 'a'.repeat(64), after, signal }))).toBe(
      'Protocol: streamTree: `after` is not a cursor this stream gave',
    );
});

test('a notification to resolve whose body is not an interaction, or has no ids, is a Protocol error', async () => {
  for (const target of [
    { body: { type: 'interaction' } },
    { body: { type: 'message', text: 'x' } },
    { threadId: 5, requestId: 'x' },
  ])
    expect(
      await refusal(() => resolveNotification(client, any(target), { type: 'approval', approved: true })),
    ).toMatch(/^Protocol: /);
});

test('configuration readers and the usage report refuse what is not their input, naming it', async () => {
  for (const value of [null, 'text', 7, []]) {
    expect(await refusal(() => loadConfig(any(value)))).toMatch(
      /^Protocol: invalid environment: /,
    );
    expect(await refusal(() => loadModelConfig(any(value)))).toMatch(
      /^Protocol: invalid model configuration: the environment: /,
    );
    expect(await refusal(() => grpcRetryOptions(any(value)))).toMatch(
      /^Protocol: invalid gRPC retry options: /,
    );
    expect(await refusal(() => grpcRetryInterceptor(any(value)))).toMatch(
      /^Protocol: invalid gRPC retry options/,
    );
  }
  expect(await refusal(() => usageReport(client, threadId, any(undefined)))).toMatch(
    /^Protocol: .*usage: snapshot/,
  );
  expect(await refusal(() => usageReport(client, 'nope', any({ records: [] })))).toMatch(
    /^Protocol: .*rootId/,
  );
  expect(await refusal(() => usageReport(any(null), threadId, any({ records: [] })))).toMatch(
    /^Protocol: .*usage/,
  );
});
