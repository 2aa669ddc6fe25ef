// The `transcriptDelta` feature: a model call carries only the transcript entries its worker does not
// keep yet; a worker that does not keep them reads them from the thread (workflows/transcript-sender.ts,
// activities/transcript-cache.ts). Against the real server, with a real OpenAI-protocol HTTP model.
import { defaultPayloadConverter } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createActivities, defineTool } from '../../activities';
import { modelTranscriptQuery } from '../../domain/messages';
import type { ModelCallInput } from '../../domain/transcript';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import {
  providerFor,
  startOpenAIServer,
  toolResultsOf,
  type ReceivedRequest,
} from '../helpers/openai-server';
import { createAgentWorker } from '../../workers/create-worker';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
const taskQueue = uniqueTaskQueue('transcript-delta');

/** A tool held until the test lets it go, so the test can change workers between two model calls. */
const gate = { entered: 0, release: () => {}, held: Promise.resolve() };
const gateTool = defineTool({
  name: 'gate',
  description: 'Waits until the test lets it go.',
  input: z.object({ step: z.number().int() }).strict(),
  run: async ({ step }) => {
    gate.entered++;
    await gate.held;
    return `gate ${step} open`;
  },
});
const steps = 4;
const activities = () => createActivities({ model: providerFor(server.url), tools: [gateTool] });

beforeAll(async () => {
  // Each call runs the gate until `steps` tool results are in, then answers.
  server = await startOpenAIServer((request) => {
    const done = toolResultsOf(request).length;
    return done < steps ? { toolCalls: [{ name: 'gate', input: { step: done + 1 } }] } : { text: 'all open' };
  });
  temporal = await connectTestTemporal();
});
afterAll(async () => {
  gate.release();
  await temporal?.close();
  await server?.close();
});

/** The model call inputs the root's history holds, in order. */
async function modelCallInputs(workflowId: string): Promise<ModelCallInput[]> {
  const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') return [];
    return [defaultPayloadConverter.fromPayload<ModelCallInput>(scheduled.input!.payloads![0]!)];
  });
}

/** The messages each model request had: system, the task, then an assistant message and a tool result per step. */
const messageCounts = (requests: ReceivedRequest[]) =>
  requests.map((request) => request.body.messages.length);

test('later calls of a turn carry only the new entries; the model is sent the whole transcript every time', async () => {
  server.requests.splice(0);
  gate.release = () => {};
  gate.held = Promise.resolve();
  const worker = await startWorker();
  try {
    // A sub-agent, so the root can message it for a second turn.
    const service = await attachRun(temporal.client, taskQueue);
    const opener = await service
      .rootControls()
      .spawn({ task: 'open every gate', name: 'opener', kernel: { type: 'model' } });
    const done = await untilTurns(service, opener.id, 1);
    expect(done.latestTurn?.result).toBe('all open');
    expect(messageCounts(server.requests)).toEqual([2, 4, 6, 8, 10]);
    const inputs = await modelCallInputs(opener.id);
    expect(inputs.map((input) => [input.transcriptBase?.from, input.transcript.length])).toEqual([
      [0, 1], // the task, whole, under a new key
      [1, 2], // then each call: the assistant's tool call and its result
      [3, 2],
      [5, 2],
      [7, 2],
    ]);
    expect(new Set(inputs.map((input) => input.transcriptBase?.key)).size).toBe(1);
    // What a worker without it reads: the transcript of the key, null for any other.
    const handle = temporal.client.workflow.getHandle(opener.id);
    const kept = await handle.query(modelTranscriptQuery, inputs[0]!.transcriptBase!.key);
    expect(kept?.map((entry) => entry.role)).toEqual([
      'user',
      ...Array(steps).fill(['assistant', 'tool']).flat(),
    ]);
    expect(await handle.query(modelTranscriptQuery, `${inputs[0]!.transcriptBase!.key}0`)).toBeNull();
    // A second turn (every gate is open: one call) extends the same transcript: its final answer and
    // the message that started it, not the whole again.
    await service
      .rootControls()
      .sendMessage({ recipient: opener.id, content: 'once more', triggerTurn: true });
    await untilTurns(service, opener.id, 2);
    expect(messageCounts(server.requests).at(-1)).toBe(12);
    const second = (await modelCallInputs(opener.id)).at(-1)!;
    expect(second.transcriptBase).toEqual({ key: inputs[0]!.transcriptBase!.key, from: 9 });
    expect(second.transcript.map((entry) => entry.role)).toEqual(['assistant', 'user']);
    await service.complete();
  } finally {
    await shutdown(worker);
  }
});

test('a worker that does not keep the transcript reads it from the thread, and the model still gets all of it', async () => {
  server.requests.splice(0);
  gate.entered = 0;
  gate.held = new Promise((open) => (gate.release = open));
  const first = await startWorker();
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task: 'open every gate, across workers', name: 'root', kernel: { type: 'model' } },
  });
  // The first call ran on the first worker, which now runs the gate. It stops once the gate is done,
  // and a second worker, with nothing kept, takes over (one process runs one worker per task queue):
  // every later call of this turn runs there.
  let second: Worker | undefined;
  try {
    await eventually(
      async () => gate.entered,
      (entered) => entered === 1,
      'the first gate',
    );
    first.shutdown();
    gate.release();
    await shutdown(first);
    second = await startWorker();
    const root = await untilTurns(service, service.rootThreadId, 1);
    expect(root.latestTurn?.result).toBe('all open');
    expect(messageCounts(server.requests)).toEqual([2, 4, 6, 8, 10]);
    const inputs = await modelCallInputs(service.rootThreadId);
    // The second call was a delta its worker did not have the base of: it read it with the query.
    expect(inputs[1]?.transcriptBase?.from).toBe(1);
    expect(inputs[1]?.transcript).toHaveLength(2);
    await service.complete();
  } finally {
    gate.release();
    await shutdown(first);
    if (second) await shutdown(second);
  }
});

/** A worker whose shutdown lets a running activity finish (the gate), with a cache of its own. */
async function startWorker(): Promise<Worker> {
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    activities: activities(),
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
    extra: { shutdownGraceTime: '1 minute' },
  });
  runs.set(worker, worker.run());
  return worker;
}
const runs = new Map<Worker, Promise<void>>();

/** Stops a worker and waits until it has (its run rethrows what stopped it otherwise). */
async function shutdown(worker: Worker): Promise<void> {
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await runs.get(worker);
}
