// SPEC S3.5: shutdown is idempotent, and a later call finishes joining. The run reports as unconfirmed
// the sub-agents whose end its grace period did not see, and closes. Before, every later call returned
// that report as it was: a thread that ended a minute later stayed unconfirmed for good (found by the
// outside test, F5). Now each call looks the unconfirmed ones up again and reports how they ended.
import { attachRun, untilTurns } from '../helpers/runs';
import { suiteWorker, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue } = suiteWorker('shutdown-join', (connected) => (temporal = connected));

test('a later shutdown reports the threads that ended after the run closed, and never invents an end', async () => {
  const later = uniqueTaskQueue('later');
  const nowhere = uniqueTaskQueue('nowhere');
  const service = await attachRun(temporal.client, taskQueue, {
    shutdownGraceMs: 3_000,
    grant: {
      owner: 'tests',
      remoteTargets: { later: { taskQueue: later }, nowhere: { taskQueue: nowhere } },
    },
  });
  const root = service.rootControls();
  // Two sub-agents no worker runs yet: the shutdown cannot see them end within its grace period.
  const resumed = await root.spawnRemote({ target: 'later', task: 'runs once a worker comes' });
  const killed = await root.spawnRemote({ target: 'nowhere', task: 'terminated from outside' });
  const fine = await root.spawn({ task: 'runs' });
  await untilTurns(service, fine.id, 1);

  const report = await service.shutdown();
  expect(report).toMatchObject({ cancelled: [fine.id], failed: [] });
  expect([...report.unconfirmed].sort()).toEqual([resumed.id, killed.id].sort());
  // Both still run: nothing is reported ended that has not.
  expect(await service.shutdown()).toEqual(report);

  // One ends as shut down once a worker runs it (its close is waiting in its history); one is terminated.
  await temporal.startWorker({ taskQueue: later });
  await temporal.client.workflow.getHandle(resumed.id).result();
  await temporal.client.workflow.getHandle(killed.id).terminate('the outside test kills it');

  const joined = await service.shutdown();
  expect(joined).toEqual({
    cancelled: [fine.id, resumed.id],
    failed: [killed.id],
    unconfirmed: [],
    completedAt: report.completedAt,
  });
  // A reopened service (a process that restarted) joins the same way.
  const { ThreadService } = await import('../../client/thread-service');
  const reopened = await ThreadService.reopen(temporal.client, service.rootThreadId, service.capability);
  expect(await reopened.shutdown()).toEqual(joined);
  // The run's own result keeps the report as it was when it closed.
  expect((await service.result()).shutdown).toEqual(report);
}, 240_000);
