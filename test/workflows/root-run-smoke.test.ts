import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { attachRun, untilTurns } from '../helpers/runs';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('smoke');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

test('root spawns a child that replies and messages back', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const controls = service.rootControls();
  const child = await controls.spawn({
    task: 'say hi',
    name: 'greeter',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'send', to: 'parent', content: 'hi root' },
          { type: 'reply', text: 'said hi' },
        ],
      ],
    },
  });
  expect(child).toMatchObject({ path: '/root/greeter', depth: 1, status: 'pending' });
  const done = await untilTurns(service, child.id, 1);
  expect(done.latestTurn).toMatchObject({ status: 'completed', result: 'said hi' });
  const messages = await service.takeRootMessages();
  expect(messages.map((m) => [m.sender, m.content, m.seq])).toEqual([[child.id, 'hi root', 1]]);
  const waited = await controls.wait({ threadIds: [child.id], timeoutMs: 0 });
  expect(waited.timedOut).toBe(false);
  await service.handle.terminate();
});
