// SPEC S3.10: a retried update takes effect once, also when the first attempt landed on an earlier run
// of a root that has since continued as new (Temporal deduplicates update ids only within one run).
// Spawns: every client spawn carries a request id (one is made when the caller gives none), which the
// root's registry remembers across runs.
import { temporal as proto } from '@temporalio/proto';
import { spawnUpdate } from '../../domain/messages';
import { attachRun, eventually } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('update-retry');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

test('a spawn update re-sent with the same update id after the root continued as new spawns once', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const first = await root.spawn({ task: 'spawn me once', name: 'once' });

  // The update exactly as the client sent it (update id and arguments), from the first run's history.
  const history = await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory();
  const accepted = (history.events ?? []).find(
    (event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'spawn',
  )!.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!;
  const updateId = accepted.meta!.updateId!;
  const [scope, request] = (accepted.input!.args!.payloads ?? []).map(
    (payload: proto.api.common.v1.IPayload) => JSON.parse(Buffer.from(payload.data!).toString('utf8')),
  );
  expect(request.requestId).toMatch(/^request_[0-9a-f]{32}$/);

  // Push the root through continue-as-new with cheap updates.
  const firstRunId = (await service.handle.describe()).runId;
  await eventually(
    async () => {
      await root.wait({ threadIds: [first.id], timeoutMs: 0 });
      return (await service.handle.describe()).runId;
    },
    (runId) => runId !== firstRunId,
    'the root to continue as new',
    120_000,
  );

  // The retry: same update id, same arguments, on the new run.
  const again = await temporal.client.workflow
    .getHandle(service.rootThreadId)
    .executeUpdate(spawnUpdate, { args: [scope, request], updateId });
  expect(again.id).toBe(first.id);
  expect((await service.counters()).total).toBe(1);
  expect((await root.listThreads()).filter((thread) => thread.name === 'once')).toHaveLength(1);
  await service.shutdown();
}, 180_000);
