// SPEC S3.10: the worst one workflow task of a root run may have to answer, all at once. A task
// completion over 4 MiB is refused (sdk-core fails the task: GrpcMessageTooLarge), the server rejects
// every update waiting on it (FAILED_PRECONDITION) and the run is stuck until an attempt fits. The room
// is shared: ten client updates of at most `maxUpdateBytes` each, echoed back in the completion that
// accepts them (1.6 MB), and what agents-kit sends itself — child starts, update and agent answers,
// publishes — of at most `taskSendBytes` together (past it, the rest leave in the next task). Here it
// all arrives while no worker polls the root's task queue, so the first task of the restarted worker
// takes it together; the root's history then shows what each task's completion carried.
//
// Without the shared budget both fail: with answers, starts and publishes bounded apart, the first test
// made ~4.3 MB (six readers' answers) or ~5.4 MB (ten starts), and the second 4.7 MB (a first answer of
// 1.5 MiB went whatever the rest: the task failed with "GRPC Message too large" and all ten updates were
// rejected).
import type { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { maxUpdateBytes } from '../../domain/answer-bounds';
import { jsonBytes } from '../../domain/bytes';
import { newId } from '../../domain/ids';
import { spawnUpdate, threadQuery, waitUpdate } from '../../domain/messages';
import type { AgentThread } from '../../domain/schemas';
import { taskSendBytes } from '../../workflows/task-budget';
import { attachRun, eventually } from '../helpers/runs';
import {
  controlRequests,
  failedTasks,
  historyEvents,
  Stage,
  taskAnswers,
  updateStage,
  type TaskAnswer,
} from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { longTool, worst } from '../helpers/tools';

let temporal: TestTemporal;
/** The root's queue, whose worker the test stops and starts again. */
const taskQueue = uniqueTaskQueue('answer-worst-case');
/** The readers' fleet (a remote target of the grant): it keeps running while the root's worker is down. */
const readerQueue = uniqueTaskQueue('answer-worst-case-readers');
let rootWorker: Worker;
beforeAll(async () => {
  temporal = await connectTestTemporal();
  rootWorker = await temporal.startWorker({ taskQueue });
  await temporal.startWorker({
    taskQueue: readerQueue,
    activities: createActivities({ tools: [longTool()] }),
  });
});
afterAll(async () => temporal?.close());

const mebibytes4 = 4 * 1024 * 1024;

test('ten 160 KiB client spawns, child starts and answers up to the task budget in one task: every task is answered, nothing is lost', async () => {
  const started = Date.now();
  const service = await attachWithReaders();
  const root = service.rootControls();

  // (c) Six readers on the other fleet. Their first turn ends with 96 kB of worst-case text, so the
  // root's record of each (latest and first turn) takes ~193 kB; their second turn asks the root for that
  // record (an agent's request arrives by signal, which takes no update slot) and replies with it. Four
  // answers fit one task's answer budget; without the budget all six (1.16 MB) would leave in one task.
  const readers: AgentThread[] = await Promise.all(
    Array.from({ length: 6 }, (_, index) =>
      root.spawnRemote({
        target: 'readers',
        name: `reader-${index}`,
        task: 'read your own record when asked',
        kernel: {
          type: 'scripted',
          turns: [
            [
              { type: 'tool', tool: 'long', input: { length: 16_000 } },
              { type: 'reply', text: '{{last}}' },
            ],
            [
              { type: 'load', target: 'self' },
              { type: 'reply', text: '{{last}}' },
            ],
          ],
        },
      }),
    ),
  );
  await eventually(
    () => root.listThreads(),
    (listed) =>
      readers.every((reader) => {
        const thread = listed.find((candidate) => candidate.id === reader.id);
        return thread?.turnsCompleted === 1 && thread.status === 'idle';
      }),
    "the readers' first turns",
    120_000,
  );

  // (a) and (b) Ten spawns, as many updates as Temporal keeps in flight for one workflow, each just
  // under `maxUpdateBytes`. A child's start carries its task twice (thread and spec) and its
  // instructions once: ~298 kB each, so five fit `startBytesInFlight` and the other five wait.
  const spawns = Array.from({ length: 10 }, (_, index) => bigSpawn(`big-${index}`));
  for (const request of spawns) {
    expect(jsonBytes(request)).toBeLessThanOrEqual(maxUpdateBytes);
    expect(jsonBytes(request)).toBeGreaterThan(maxUpdateBytes - 1_500);
  }

  // Nobody polls the root's queue from here on: what follows piles up for its next task.
  await stopRootWorker();
  const burstRun = (await service.handle.describe()).runId;
  const requestsBefore = controlRequests(
    await historyEvents(temporal.client, service.rootThreadId, burstRun),
  );
  // The spawns go out now; their answers come once a worker runs the root again.
  const updateIds = spawns.map(() => randomUUID());
  const answers = updateIds.map((updateId, index) =>
    service.handle.executeUpdate(spawnUpdate, { args: [root.capability, spawns[index]!], updateId }),
  );
  for (const answer of answers) void answer.catch(() => undefined); // awaited below
  await eventually(
    () =>
      Promise.all(updateIds.map((updateId) => updateStage(temporal.client, service.rootThreadId, updateId))),
    (stages) => stages.every((stage) => stage === Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED),
    'the server to admit the ten spawns',
    60_000,
  );
  // The readers' second turns: each asks the root for its record, by a signal that waits in history.
  await Promise.all(
    readers.map((reader) =>
      root.sendMessage({ recipient: reader.id, content: 'read now', triggerTurn: true }),
    ),
  );
  await eventually(
    () => historyEvents(temporal.client, service.rootThreadId, burstRun),
    (events) => controlRequests(events) === requestsBefore + readers.length,
    "the readers' requests to reach the root",
    60_000,
  );

  // The first task of a fresh worker takes all of it: ten updates, six requests.
  rootWorker = await temporal.startWorker({ taskQueue });
  const threads = await Promise.all(answers);

  // Every spawn was admitted once and answered whole.
  expect(new Set(threads.map((thread) => thread.id)).size).toBe(spawns.length);
  expect(threads.map((thread) => [thread.name, thread.task])).toEqual(
    spawns.map((request) => [request.name, request.task]),
  );
  // Every reader got its whole record: its reply is that record (its own workflow keeps the reply whole).
  const replies = await eventually(
    () =>
      Promise.all(readers.map((reader) => temporal.client.workflow.getHandle(reader.id).query(threadQuery))),
    (read) => read.every((thread) => thread.turnsCompleted === 2 && thread.status === 'idle'),
    "the readers' second turns",
    120_000,
  );
  for (const [index, reply] of replies.entries()) {
    const record = JSON.parse(reply.latestTurn!.result!) as AgentThread;
    expect(record.id).toBe(readers[index]!.id);
    expect(record.latestTurn?.result).toBe(worst(16_000));
  }
  // Every big thread ran; the registry holds exactly what was asked.
  const listed = await eventually(
    () => root.listThreads(),
    (all) =>
      threads.every((thread) => all.find((candidate) => candidate.id === thread.id)?.turnsCompleted === 1),
    "the big threads' first turns",
    120_000,
  );
  expect(listed).toHaveLength(1 + readers.length + spawns.length);
  expect(await service.counters()).toMatchObject({ live: 16, total: 16 });

  // No task failed, in the root (each of its runs) or any thread.
  const burstEvents = await historyEvents(temporal.client, service.rootThreadId, burstRun);
  expect(failedTasks(burstEvents)).toEqual([]);
  expect(failedTasks(await historyEvents(temporal.client, service.rootThreadId))).toEqual([]);
  for (const thread of [...readers, ...threads])
    expect({
      thread: thread.name,
      failed: failedTasks(await historyEvents(temporal.client, thread.id)),
    }).toEqual({
      thread: thread.name,
      failed: [],
    });

  // What the largest completions carried: 10 × 160 KiB of echoes and up to `taskSendBytes` of starts
  // and answers.
  const [largest] = largestTasks(burstEvents, started);
  // The hard case was reached: one task carried all of them near their bounds at once...
  expect(largest!.echoes).toBeGreaterThan(spawns.reduce((sum, request) => sum + jsonBytes(request), 0));
  expect(largest!.starts).toBeGreaterThan(1_000_000);
  expect(largest!.starts + largest!.updateAnswers + largest!.signals).toBeGreaterThan(
    taskSendBytes - 400_000,
  );
  expect(largest!.total).toBeGreaterThan(3_100_000);
  // ...and still fit Temporal's limit.
  expect(largest!.total).toBeLessThan(mebibytes4);
  await service.shutdown();
}, 480_000);

/**
 * A spawn request just under `maxUpdateBytes`. A child's start carries its task twice (thread and
 * spec) and its instructions once: ~298 kB.
 */
const bigSpawn = (name: string) => ({
  name,
  task: `${name}: ${worst(21_800)}`,
  instructions: worst(5_300),
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: `${name} done` }]] },
  fork: { type: 'none' as const },
  requestId: newId('request', randomUUID),
});

/** A root run whose grant has the readers' fleet as a remote target (it runs while the root's is down). */
const attachWithReaders = () =>
  attachRun(temporal.client, taskQueue, {
    grant: {
      owner: 'tests',
      maxConcurrent: 32,
      maxTotal: 32,
      remoteTargets: { readers: { taskQueue: readerQueue } },
    },
  });

/** Stops the root's worker: nothing is taken from its task queue until a new one starts. */
async function stopRootWorker(): Promise<void> {
  rootWorker.shutdown();
  await eventually(
    async () => rootWorker.getState(),
    (state) => state === 'STOPPED',
    'the root worker to stop',
    60_000,
  );
}

/** Prints the four largest task completions of a history, and returns them, largest first. */
function largestTasks(events: Parameters<typeof taskAnswers>[0], started: number): TaskAnswer[] {
  const tasks = taskAnswers(events).sort((a, b) => b.total - a.total);
  const kB = (bytes: number) => `${Math.round(bytes / 1000)} kB`.padStart(15);
  const columns = ['echoes', 'starts', 'updateAnswers', 'signals', 'total'] as const;
  console.log(
    [
      `task event${columns.map((column) => column.padStart(15)).join('')}`,
      ...tasks
        .slice(0, 4)
        .map(
          (task) =>
            `${String(task.eventId).padStart(10)}${columns.map((column) => kB(task[column])).join('')}`,
        ),
      `(the test took ${Math.round((Date.now() - started) / 1000)} s)`,
    ].join('\n'),
  );
  return tasks;
}

test('nine 160 KiB spawns and a wait answer of 1.5 MiB in one task: the answer waits for the next task', async () => {
  const started = Date.now();
  const service = await attachWithReaders();
  const root = service.rootControls();
  // Six threads (on the fleet that keeps running) whose turn results take ~262 kB as JSON each: a wait
  // on all of them answers ~1.57 MB, the most one answer may take (`maxAnswerBytes`).
  const longs = await Promise.all(
    Array.from({ length: 6 }, (_, index) =>
      root.spawnRemote({
        target: 'readers',
        name: `long-${index}`,
        task: 'answer at length',
        kernel: {
          type: 'scripted',
          turns: [
            [
              { type: 'tool', tool: 'long', input: { length: 14_535 } },
              { type: 'reply', text: '{{last}}{{last}}{{last}}' },
            ],
          ],
        },
      }),
    ),
  );
  const waitArgs = [root.capability, { threadIds: longs.map((thread) => thread.id), timeoutMs: 0 }] as const;
  await eventually(
    () => service.handle.executeUpdate(waitUpdate, { args: [...waitArgs] }),
    (result) => result.outcomes.every((outcome) => outcome.latestTurn !== undefined),
    'the long turns',
    120_000,
  );
  const spawns = Array.from({ length: 9 }, (_, index) => bigSpawn(`spawn-${index}`));
  // Nobody polls the root's queue from here on: the ten updates pile up for its next task.
  await stopRootWorker();
  const run = (await service.handle.describe()).runId;
  const ids = [...spawns.map(() => randomUUID()), randomUUID()];
  const sentSpawns = spawns.map((request, index) =>
    service.handle.executeUpdate(spawnUpdate, { args: [root.capability, request], updateId: ids[index]! }),
  );
  const sentWait = service.handle.executeUpdate(waitUpdate, { args: [...waitArgs], updateId: ids[9]! });
  const sent: Promise<unknown>[] = [...sentSpawns, sentWait];
  for (const update of sent) void update.catch(() => undefined); // awaited below
  await eventually(
    () => Promise.all(ids.map((updateId) => updateStage(temporal.client, service.rootThreadId, updateId))),
    (stages) => stages.every((stage) => stage === Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED),
    'the server to admit the ten updates',
    60_000,
  );
  rootWorker = await temporal.startWorker({ taskQueue });
  const threads = await Promise.all(sentSpawns);
  const waited = await sentWait;
  // Every update was answered whole: nine admitted spawns and the wait with every result.
  expect(new Set(threads.map((thread) => thread.id)).size).toBe(9);
  expect(waited.outcomes.map((outcome) => outcome.latestTurn?.result?.length)).toEqual(
    longs.map(() => 3 * 14_535),
  );
  const events = await historyEvents(temporal.client, service.rootThreadId, run);
  expect(failedTasks(events)).toEqual([]);
  const [largest] = largestTasks(events, started);
  expect(largest!.total).toBeLessThan(mebibytes4);
  await service.shutdown();
}, 480_000);
