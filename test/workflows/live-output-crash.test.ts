// SPEC S7.1 for live output (S10.1): a worker SIGKILLed while a model call streams. The call is retried
// as a new attempt that streams again from the start; the watcher is told (a new call, `started`), the
// turn ends once with the retried call's whole text, and nothing the watcher saw is lost or doubled.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { setTimeout as delay } from 'node:timers/promises';
import { ThreadService } from '../../client/thread-service';
import type { LiveOutputEvent } from '../../client/live-output';
import { eventually, untilTurns } from '../helpers/runs';
import { testServerAddress, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { WorkerProcess } from '../helpers/worker-process';

let connection: Connection;
let worker: WorkerProcess;

beforeAll(async () => {
  connection = await connectTest({ address: testServerAddress() });
});
afterAll(async () => {
  await worker?.kill();
  await connection?.close();
});

test('a worker killed mid-stream: the retried call streams again, the turn ends once with its text', async () => {
  const taskQueue = uniqueTaskQueue('live-crash');
  // The scripted model in the worker process writes a word every 40 ms: a call streams for seconds.
  worker = new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath(), {
    AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: '40',
  });
  await worker.start();
  const client = new Client({ connection });
  const service = await ThreadService.attach(client, {
    taskQueue,
    owner: 'tests',
    root: {
      task: 'coordinate',
      name: 'root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'ok' }]] },
    },
    grant: { owner: 'tests', idleTimeoutMs: 600_000 },
  });
  const task = Array.from({ length: 60 }, (_, n) => `part${n}`).join(' ');
  const thread = await service
    .rootControls()
    .spawn({ task, name: 'writer', kernel: { type: 'model' }, tools: [] });

  const events: LiveOutputEvent[] = [];
  const stop = new AbortController();
  const watching = (async () => {
    for await (const event of service.watchOutput(thread.id, { signal: stop.signal, pollWaitMs: 5_000 }))
      events.push(event);
  })();

  const textOfAttempt = (attempt: number) =>
    events
      .flatMap((event) => (event.type === 'text' && event.call.attempt === attempt ? [event.text] : []))
      .join('');
  await eventually(
    async () => textOfAttempt(1).length,
    (length) => length > 40,
    'the first attempt streaming',
  );
  await worker.kill();
  const cutOff = textOfAttempt(1);
  await delay(300);
  await worker.start();

  // The call's heartbeat times out, and its retry streams from the start.
  const idle = await untilTurns(service, thread.id, 1);
  const answer = idle.latestTurn!.result!;
  expect(idle.latestTurn).toMatchObject({ status: 'completed', turn: 1 });
  expect(idle.turnsCompleted).toBe(1);
  await eventually(
    async () => events.some((event) => event.type === 'end' && event.call.attempt > 1),
    Boolean,
    'the retried call’s end',
  );
  stop.abort();
  await watching;
  const retried = events.find((event) => event.type === 'text' && event.call.attempt > 1);
  expect(retried).toMatchObject({ type: 'text', started: true, offset: 0 });
  const attempt = retried!.call.attempt;
  expect(textOfAttempt(attempt)).toBe(answer);
  expect(events.filter((event) => event.type === 'end')).toEqual([
    expect.objectContaining({
      call: expect.objectContaining({ attempt }),
      end: 'finished',
      length: answer.length,
    }),
  ]);
  // What the killed attempt streamed was the start of the same answer, each piece once.
  expect(answer.startsWith(textOfAttempt(1))).toBe(true);
  expect(textOfAttempt(1).startsWith(cutOff)).toBe(true);
  expect(answer).toContain(task);
}, 120_000);
