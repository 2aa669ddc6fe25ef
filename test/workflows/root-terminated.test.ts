// SPEC S4.4: a root run terminated from outside runs none of its code, so it closes nobody. Its
// sub-agents end as its close would end them once a report to it finds it gone (patch
// `rootGoneEndsThread`): a message that asks for a turn no longer runs one outside any budget.
import type { AgentThread } from '../../domain/schemas';
import { attachRun, sleeperAfterReady, untilClosed, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('root-terminated');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

test('a sub-agent of a terminated root ends cancelled at its next turn, which does not run', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const kid = await root.spawn(sleeperAfterReady('kid'));
  await untilTurns(service, kid.id, 1);
  await temporal.client.workflow.getHandle(service.rootThreadId).terminate('from outside');
  // The kid still takes the message (it cannot know yet), then learns at its turn's first report.
  await root.sendMessage({ recipient: kid.id, content: 'work', triggerTurn: true });
  expect(await untilClosed(temporal.client, kid.id)).toBe('COMPLETED');
  const ended = (await temporal.client.workflow.getHandle(kid.id).result()) as AgentThread;
  expect(ended.status).toBe('cancelled');
  expect(ended.latestTurn).toMatchObject({ turn: 2, status: 'interrupted' });
}, 120_000);
