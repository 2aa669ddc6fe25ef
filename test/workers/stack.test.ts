import { WorkflowFailedError } from '@temporalio/client';
import { ErrorKind, KitError } from '../../domain/errors';
import { rootCapability } from '../../domain/capability';
import { newId, type ThreadId } from '../../domain/ids';
import { loadThreadQuery, spawnUpdate } from '../../domain/messages';
import { DelegationGrant, type RootRunInputShape } from '../../domain/schemas';
import { kitCall, toKitError } from '../../client/errors';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { randomBytes, randomUUID } from 'node:crypto';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('stack');

beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const runKey = randomBytes(32).toString('hex');

function rootInput(): RootRunInputShape {
  const rootThreadId = newId('thread', randomUUID);
  return {
    protocolVersion: 1,
    rootThreadId,
    runKey,
    taskQueue,
    spec: { task: 'prove the stack', name: 'root' },
    grant: DelegationGrant.parse({ owner: 'tests', rootThreadId }),
  };
}

test('a root-run workflow starts on the real server and answers a query', async () => {
  const input = rootInput();
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId: input.rootThreadId,
    args: [input],
  });
  const capability = rootCapability(runKey, input.rootThreadId as ThreadId);
  const root = await handle.query(loadThreadQuery, capability, input.rootThreadId);
  expect(root).toMatchObject({
    ok: true,
    value: { id: input.rootThreadId, path: '/root', depth: 0, parentId: null },
  });
  await handle.terminate('test done');
});

test('a workflow failing with a KitError reaches the client as a KitError of the same kind', async () => {
  const input = { ...rootInput(), rootThreadId: 'thread_NOT-HEX' };
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId: `bad-${randomUUID()}`,
    args: [input],
  });
  const failure = await handle.result().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const error = toKitError(failure);
  expect(error).toBeInstanceOf(KitError);
  expect(error.kind).toBe(ErrorKind.Protocol);
  expect(error.message).toContain('rootThreadId');
  expect(error.retryable).toBe(false);
  expect(error.cause).toBe(failure);
});

test('an update rejected by its validator reaches the client as a Protocol KitError naming the field', async () => {
  const input = rootInput();
  const handle = await temporal.client.workflow.start('rootRunWorkflow', {
    taskQueue,
    workflowId: input.rootThreadId,
    args: [input],
  });
  const scope = rootCapability(runKey, input.rootThreadId as ThreadId);
  const rejected = await kitCall('spawn', () =>
    handle.executeUpdate(spawnUpdate, { args: [scope, { task: '', fork: { type: 'none' } } as never] }),
  ).catch((error: unknown) => error);
  expect(rejected).toBeInstanceOf(KitError);
  expect((rejected as KitError).kind).toBe(ErrorKind.Protocol);
  expect((rejected as KitError).message).toMatch(/task/);
  expect((rejected as KitError).details).toEqual({ fields: ['task'] });
  await handle.terminate('test done');
});
