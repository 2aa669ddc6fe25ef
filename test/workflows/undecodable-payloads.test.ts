// SPEC S3.10: payloads that cannot be decoded — bytes that are not JSON, an encoding nobody knows, no
// encoding at all — sent straight over Temporal's gRPC API (as any program can, with no data converter)
// to every signal, update and query of a tree's workflows. Temporal's default converter throws while
// decoding a signal's arguments inside the workflow task, which failed that task on every attempt:
// the agent was wedged for good. With ours, each such payload reads as a value every handler refuses:
// the updates are refused with a KitError kind, the signals change nothing, no task fails, and the tree
// still works. A workflow of ours started with such an input fails as Protocol.
import type { Client } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { failedTasks } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { expectTreeUnharmed, handlersOf, treeWithIdleChild } from '../helpers/workflow-handlers';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('undecodable');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const bytes = (text: string) => new TextEncoder().encode(text);
type Payload = proto.api.common.v1.IPayload;
const undecodable: Payload[] = [
  { metadata: { encoding: bytes('json/plain') }, data: bytes('{not json') },
  { metadata: { encoding: bytes('binary/unknown') }, data: bytes('zz') },
  { metadata: {}, data: bytes('zz') },
  { metadata: { encoding: bytes('json/protobuf'), messageType: bytes('no.Such') }, data: bytes('{}') },
];
/** Argument lists: one undecodable payload, or one beside a well-formed null. */
const argumentLists = (): Payload[][] =>
  undecodable.flatMap((payload) => [[payload], [payload, payload], [{ ...nullPayload }, payload]]);
const nullPayload: Payload = { metadata: { encoding: bytes('binary/null') }, data: new Uint8Array() };

const kinds = new Set<string>(Object.values(ErrorKind));
const Stage = proto.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;

/** Sends an update with raw payloads; 'refused' when the workflow refused it with a KitError kind. */
async function rawUpdate(client: Client, workflowId: string, name: string, args: Payload[]): Promise<string> {
  const response = await client.workflowService.updateWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId },
    request: {
      meta: { updateId: randomUUID(), identity: 'raw' },
      input: { name, args: { payloads: args } },
    },
    waitPolicy: { lifecycleStage: Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED },
  });
  const type = response.outcome?.failure?.applicationFailureInfo?.type;
  if (type && kinds.has(type)) return 'refused';
  return `outcome ${JSON.stringify(response.outcome ?? null).slice(0, 300)}`;
}

test('undecodable payloads to every signal, update and query of a tree are refused and change nothing', async () => {
  const client = temporal.client;
  const tree = await treeWithIdleChild(client, taskQueue);
  const { workflows } = tree;
  const wrong: string[] = [];
  for (const workflowId of workflows) {
    const handlers = await handlersOf(client, workflowId);
    for (const name of handlers.signals)
      for (const args of argumentLists())
        await client.workflowService.signalWorkflowExecution({
          namespace: client.options.namespace,
          workflowExecution: { workflowId },
          signalName: name,
          input: { payloads: args },
          identity: 'raw',
          requestId: randomUUID(),
        });
    for (const name of handlers.updates)
      for (const args of argumentLists()) {
        const outcome = await rawUpdate(client, workflowId, name, args);
        if (outcome !== 'refused') wrong.push(`${workflowId} update ${name}: ${outcome}`);
      }
    for (const name of handlers.queries)
      for (const args of argumentLists())
        await client.workflowService
          .queryWorkflow({
            namespace: client.options.namespace,
            execution: { workflowId },
            query: { queryType: name, queryArgs: { payloads: args } },
          })
          .catch(() => undefined);
  }
  expect(wrong).toEqual([]);
  await expectTreeUnharmed(client, tree);
  await tree.service.shutdown();
}, 300_000);

test('a workflow of ours started with an input that cannot be decoded fails as Protocol, without a failed task', async () => {
  const client = temporal.client;
  const types = ['agentWorkflow', 'rootRunWorkflow', 'conversationWorkflow', 'conversationPageWorkflow'];
  for (const type of types) {
    const workflowId = `undecodable-${type}-${randomUUID()}`;
    await client.workflowService.startWorkflowExecution({
      namespace: client.options.namespace,
      workflowId,
      workflowType: { name: type },
      taskQueue: { name: taskQueue },
      input: { payloads: [undecodable[0]!] },
      identity: 'raw',
      requestId: randomUUID(),
    });
    const handle = client.workflow.getHandle(workflowId);
    await handle.result().catch(() => undefined);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const failure = events.find((event) => event.workflowExecutionFailedEventAttributes)
      ?.workflowExecutionFailedEventAttributes?.failure;
    expect([type, failure?.applicationFailureInfo?.type, failedTasks(events)]).toEqual([
      type,
      ErrorKind.Protocol,
      [],
    ]);
  }
});
