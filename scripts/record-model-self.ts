// The scenario of scripts/record-histories.ts `--model-self` (patch `modelToolsSpareSelf`): a root whose
// model interrupts its own turn and waits on its own thread, each refused as a tool error. The model is
// a real OpenAI-protocol HTTP server (the tests' own), on a worker of its own task queue.
import type { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createAgentWorker } from '../workers/create-worker';
import { attachRecorder } from './record-attach';
import { providerFor, selfTargetingModel, startOpenAIServer } from '../test/helpers/openai-server';
import { untilTurns } from '../test/helpers/runs';

export async function recordModelToolsSpareSelf(client: Client): Promise<void> {
  const server = await startOpenAIServer(selfTargetingModel);
  const connection = await NativeConnection.connect({
    address: (client.connection as Connection).options.address,
  });
  const taskQueue = 'record-model-self';
  const worker = await createAgentWorker({
    connection,
    taskQueue,
    activities: createActivities({ model: providerFor(server.url) }),
  });
  const running = worker.run();
  try {
    const service = await attachRecorder(client, taskQueue, {
      root: { task: 'stop yourself', name: 'root', kernel: { type: 'model', maxSteps: 6 } },
    });
    await untilTurns(service, service.rootThreadId, 1);
    await service.shutdown();
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await server.close();
  }
}
