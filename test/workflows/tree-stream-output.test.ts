// SPEC S10.1/S10.2: `streamTree({ output: true })` watches every thread it follows, so what their model
// calls generate streams into the tree stream; without it a model call nobody watches sends nothing.
import { createActivities } from '../../activities';
import type { TreeEvent } from '../../client/tree-stream';
import { attachRun, untilTurns } from '../helpers/runs';
import { providerFor, startOpenAIServer } from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
const taskQueue = uniqueTaskQueue('tree-output');
const words = (count: number, tag: string) => Array.from({ length: count }, (_, n) => `${tag}${n}`).join(' ');
let text = '';

beforeAll(async () => {
  // Held before the first byte, so the watch is there from the start; then a word every 10 ms.
  server = await startOpenAIServer(() => ({ text, delayMs: 1_500, chunkDelayMs: 10 }));
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: createActivities({ model: providerFor(server.url), tools: [] }),
  });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});

const outputOf = (events: TreeEvent[], threadId: string) =>
  events
    .filter((event) => event.threadId === threadId)
    .flatMap((event) => (event.event.type === 'output' ? [event.event] : []));

test.each([true, false])('streamTree with output %s', async (output) => {
  const service = await attachRun(temporal.client, taskQueue);
  text = words(60, output ? 'on' : 'off');
  const controller = new AbortController();
  const events: TreeEvent[] = [];
  let childId = '';
  const isChildEnd = (event: TreeEvent) =>
    event.threadId === childId &&
    event.event.type === 'notification' &&
    event.event.body.type === 'status' &&
    event.event.body.event === 'turn-end';
  const reading = (async () => {
    for await (const event of service.streamTree({ signal: controller.signal, output })) {
      events.push(event);
      if (isChildEnd(event)) break;
    }
  })();
  const child = await service.rootControls().spawn({ task: 'think aloud', kernel: { type: 'model' } });
  childId = child.id;
  await untilTurns(service, child.id, 1);
  await reading;
  controller.abort();
  const streamed = outputOf(events, child.id);
  if (!output) {
    expect(streamed).toEqual([]);
    return;
  }
  // Every flush before the turn's end, in order, making up the whole answer.
  expect(streamed.map((flush) => flush.text).join('')).toBe(text);
  expect(streamed.at(-1)?.end).toBe('finished');
  expect(streamed.length).toBeGreaterThanOrEqual(2);
});
