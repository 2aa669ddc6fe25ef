// createAgentWorker given a connection it cannot run on: a KitError that says what to install, before
// Temporal's Worker.create fails deep in its native bridge ("failed to downcast …") with its workflow
// threads started. Seen from an app whose @temporalio/worker is another copy than agents-kit's.
import { Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { KitError } from '../../domain/errors';
import { z } from 'zod';
import { createActivities, defineTool } from '../../activities';
import { createAgentWorker } from '../../workers/create-worker';

/** What createAgentWorker refused `connection` with. */
async function refusal(connection: unknown): Promise<KitError> {
  const outcome: unknown = await createAgentWorker({
    connection: connection as NativeConnection,
    taskQueue: 'create-worker-refused',
  }).then(
    () => 'created',
    (error: unknown) => error,
  );
  expect(KitError.is(outcome)).toBe(true);
  const error = outcome as KitError;
  expect(error.kind).toBe('Protocol');
  expect(error.message).toMatch(/@temporalio\/worker 1\.23\.0 \(its peer dependency\)/);
  return error;
}

test("a NativeConnection of another copy of @temporalio/worker is refused, naming agents-kit's version", async () => {
  // The same package loaded again, as an app with its own copy beside agents-kit's has it.
  let other: typeof import('@temporalio/worker') | undefined;
  jest.isolateModules(() => {
    other = jest.requireActual<typeof import('@temporalio/worker')>('@temporalio/worker');
  });
  const foreign: unknown = Object.create(other!.NativeConnection.prototype);
  expect((await refusal(foreign)).message).toMatch(
    /the connection is a NativeConnection of another copy of @temporalio\/worker/,
  );
});

test('a @temporalio/client Connection, null or a string is refused as not a NativeConnection', async () => {
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  try {
    expect((await refusal(connection)).message).toMatch(
      /the connection is a Connection, not a NativeConnection/,
    );
  } finally {
    await connection.close();
  }
  expect((await refusal(null)).message).toMatch(/the connection is null, not a NativeConnection/);
  expect((await refusal('127.0.0.1:7233')).message).toMatch(/is a String, not a NativeConnection/);
});

test('a shutdown grace that is not a whole number of milliseconds ≥ 0 is refused before anything starts', async () => {
  for (const shutdownGraceMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    const outcome: unknown = await createAgentWorker({
      connection: undefined as unknown as NativeConnection,
      taskQueue: 'create-worker-grace',
      shutdownGraceMs,
    }).then(
      () => 'created',
      (error: unknown) => error,
    );
    expect(KitError.is(outcome) && outcome.kind).toBe('Protocol');
    expect((outcome as KitError).message).toMatch(
      `createAgentWorker: shutdownGraceMs must be a whole number ≥ 0, not ${String(shutdownGraceMs)}`,
    );
  }
});

/** The `kind: message` of what `call` threw (synchronously or as a rejection). */
async function thrown(call: () => unknown): Promise<string> {
  const outcome: unknown = await Promise.resolve()
    .then(call)
    .then(
      () => 'no error',
      (error: unknown) => error,
    );
  return KitError.is(outcome) ? `${outcome.kind}: ${outcome.message}` : `not a KitError: ${String(outcome)}`;
}

test('worker options, tools and activities that JavaScript callers get wrong are Protocol errors naming the field', async () => {
  const worker = (options: unknown) => thrown(() => createAgentWorker(options as never));
  expect(await worker(undefined)).toMatch(/^Protocol: invalid createAgentWorker options/);
  expect(await worker({})).toMatch(/^Protocol: invalid createAgentWorker: taskQueue/);
  expect(await worker({ taskQueue: 42 })).toMatch(/^Protocol: invalid createAgentWorker: taskQueue/);
  expect(await worker({ taskQueue: 'q', activities: 'x' })).toMatch(
    /^Protocol: invalid createAgentWorker: activities/,
  );

  const good = { name: 'lookup', description: 'Looks up.', input: z.object({}), run: async () => 'ok' };
  expect(defineTool(good)).toBe(good);
  const tool = (definition: unknown) => thrown(() => defineTool(definition as never));
  expect(await tool({ ...good, name: 'bad name!' })).toMatch(/^Protocol: invalid defineTool: name/);
  expect(await tool({ ...good, name: '*' })).toMatch(/^Protocol: invalid defineTool: name/);
  expect(await tool({ ...good, description: '' })).toBe(
    'Protocol: defineTool: tool lookup: `description` must be a text of 1 to 10,000 characters',
  );
  expect(await tool({ ...good, input: { type: 'object' } })).toBe(
    'Protocol: defineTool: tool lookup: `input` must be a zod schema',
  );
  expect(await tool({ ...good, run: 5 })).toBe('Protocol: defineTool: tool lookup: `run` must be a function');
  expect(await tool({ ...good, local: 'yes' })).toBe(
    'Protocol: defineTool: tool lookup: `local` must be true or false',
  );

  const activities = (options: unknown) => thrown(() => createActivities(options as never));
  expect(await activities(null)).toMatch(/^Protocol: invalid createActivities options/);
  expect(await activities({ tools: 'x' })).toBe(
    'Protocol: createActivities: `tools` must be an array of tools (defineTool)',
  );
  expect(await activities({ tools: [good, { ...good }] })).toBe(
    'Protocol: createActivities: tools[1]: a second tool named lookup',
  );
  expect(await activities({ tools: [{ ...good, run: undefined }] })).toBe(
    'Protocol: createActivities: tools[0]: tool lookup: `run` must be a function',
  );
});
