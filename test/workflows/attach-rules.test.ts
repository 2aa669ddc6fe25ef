// SPEC S3.2: the rules of a new root run hold for whoever starts it. A raw Temporal client that skips
// the client library and starts rootRunWorkflow itself meets them in the workflow: a grant for another
// root or a run under another workflow id is PermissionDenied, a spent budget QuotaExceeded.
import { randomBytes, randomUUID } from 'node:crypto';
import { toKitError } from '../../client/errors';
import { newId } from '../../domain/ids';
import { DelegationGrant, type RootRunInputShape } from '../../domain/schemas';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('attach-rules');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/** Starts rootRunWorkflow straight from a raw client and returns the KitError it fails with. */
async function failureOf(input: RootRunInputShape, workflowId = input.rootThreadId): Promise<string> {
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId,
    args: [input],
  });
  const failure = await handle.result().then(
    () => undefined,
    (error: unknown) => error,
  );
  const error = toKitError(failure);
  return `${error.kind}: ${error.message}`;
}

test('a raw start with a foreign grant, another workflow id or a spent budget fails with the kind attach gives', async () => {
  const input = (grant: Partial<DelegationGrant> = {}): RootRunInputShape => {
    const rootThreadId = newId('thread', randomUUID);
    return {
      protocolVersion: 1,
      rootThreadId,
      runKey: randomBytes(32).toString('hex'),
      taskQueue,
      spec: { task: 'skip the checks', name: 'root' },
      grant: DelegationGrant.parse({ owner: 'raw', rootThreadId, ...grant }),
    };
  };
  const other = newId('thread', randomUUID);
  const foreign = input({ rootThreadId: other });
  expect(await failureOf(foreign)).toBe(
    `PermissionDenied: the grant is for root ${other}, not ${foreign.rootThreadId}`,
  );
  const elsewhere = input();
  expect(await failureOf(elsewhere, `not-${elsewhere.rootThreadId}`)).toMatch(
    /^PermissionDenied: the root run of thread_[0-9a-f]{32} must run as workflow/,
  );
  expect(await failureOf(input({ budgetTokens: 100, spentTokens: 100 }))).toBe(
    "QuotaExceeded: the grant's budget is exhausted: 100 of 100 tokens spent",
  );
});
