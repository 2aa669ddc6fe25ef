import { Worker } from '@temporalio/worker';
import { attachRun, untilTurns } from '../helpers/runs';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('replay-smoke');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

test('freshly recorded histories of a root run and its sub-agent replay without non-determinism', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const child = await service.rootControls().spawn({
    task: 'work',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'tool', tool: 'echo', input: 'x' },
          { type: 'reply', text: 'done' },
        ],
      ],
    },
  });
  await untilTurns(service, child.id, 1);
  await service.shutdown();
  for (const workflowId of [child.id, service.rootThreadId]) {
    const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: workflowBundlePath() } },
      history,
      workflowId,
    );
  }
});
