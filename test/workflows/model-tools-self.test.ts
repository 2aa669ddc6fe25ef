// SPEC S4.6, S4.7: a model's tools act on other agents. From outside, the root's model interrupted its
// own running turn with interrupt_agent (the root's controls carry the service's root authority): the
// turn ended `interrupted` with no answer; and wait_agents on its own id blocked to its timeout. Both
// are tool errors the model reads now. Real server, real OpenAI-protocol HTTP model.
import { createActivities } from '../../activities';
import { patchesOf } from '../helpers/histories';
import { attachRun, untilTurns } from '../helpers/runs';
import { providerFor, startOpenAIServer, selfTargetingModel, toolResultsOf } from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
const taskQueue = uniqueTaskQueue('model-self');

beforeAll(async () => {
  server = await startOpenAIServer(selfTargetingModel);
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ model: providerFor(server.url) }) });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});

test("a model's interrupt of its own turn and wait on its own thread are tool errors; the turn goes on", async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task: 'stop yourself', name: 'root', kernel: { type: 'model', maxSteps: 6 } },
  });
  const root = await untilTurns(service, service.rootThreadId, 1);
  expect(root.latestTurn).toMatchObject({ status: 'completed', result: 'answered' });
  const results = toolResultsOf(server.requests.at(-1)!).map(({ name, content }) => [
    name,
    JSON.parse(content),
  ]);
  expect(results).toEqual([
    [
      'interrupt_agent',
      {
        error: {
          kind: 'PermissionDenied',
          message: `interrupt_agent: you may only interrupt your descendants, not yourself (${root.id}); to stop, answer`,
        },
      },
    ],
    [
      'wait_agents',
      { error: { kind: 'InvalidState', message: expect.stringMatching(/^wait_agents: .* is you/) } },
    ],
  ]);
  const { events } = await temporal.client.workflow.getHandle(root.id).fetchHistory();
  expect(patchesOf(events ?? [])).toEqual(['modelToolsSpareSelf']);
  await service.shutdown();
});
