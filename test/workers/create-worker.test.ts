// createAgentWorker given a connection it cannot run on: a KitError that says what to install, before
// Temporal's Worker.create fails deep in its native bridge ("failed to downcast …") with its workflow
// threads started. Seen from an app whose @temporalio/worker is another copy than agents-kit's.
import { Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { KitError } from '../../domain/errors';
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
