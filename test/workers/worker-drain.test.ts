// A deploy stops a worker (SIGTERM) in the middle of a streamed model call. With the default grace the
// call finishes on the stopping worker: the provider is asked once and never cut off, the turn ends
// with the whole text on its first attempt, and the worker exits 0. With AGENTS_KIT_SHUTDOWN_GRACE_MS=0
// (what every worker did before the grace existed) the call is cancelled at once: the provider sees its
// request cut off and another worker asks again, a second bill for the same call.
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { createActivities } from '../../activities';
import { startCli, startModelWorker, untilOutput } from '../helpers/cli';
import { providerFor, startOpenAIServer } from '../helpers/openai-server';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { suiteTemporal, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';

const temporal = suiteTemporal();

/** Sixty words streamed one per 100 ms: a call of about six seconds. */
const longText = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');

/** The model activity's start and end in the root's history (its last attempt, as Temporal records it). */
async function modelCallOf(rootId: string) {
  const { events } = await temporal().client.workflow.getHandle(rootId).fetchHistory();
  const scheduled = (events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  const started = (events ?? []).filter((event) => event.activityTaskStartedEventAttributes);
  const completed = (events ?? []).filter((event) => event.activityTaskCompletedEventAttributes);
  return {
    scheduled: scheduled.length,
    attempts: started.map((event) => event.activityTaskStartedEventAttributes!.attempt),
    identities: started.map((event) => event.activityTaskStartedEventAttributes!.identity),
    completed: completed.length,
  };
}

/**
 * Starts `agents-kit worker` against a streaming model server, starts a model turn on it, and SIGTERMs
 * it once the model call is under way; then a second worker (this process) takes over the queue.
 */
async function stopMidCall(graceEnv: Record<string, string>, asCtrlC = false) {
  const server = await startOpenAIServer(() => ({ text: longText, tokens: 40, chunkDelayMs: 100 }));
  const taskQueue = uniqueTaskQueue('drain');
  const stopping = startModelWorker(temporal().address, taskQueue, server.url, graceEnv, {
    detached: asCtrlC,
  });
  try {
    await untilOutput(stopping, new RegExp(`worker polling task queue ${taskQueue}`));
    const service = await attachRun(temporal().client, taskQueue, {
      root: { task: 'say sixty words', name: 'root', kernel: { type: 'model' } },
    });
    await eventually(
      async () => server.requests.length,
      (count) => count === 1,
      'the model call to reach the server',
    );
    // Half a second into the stream, most of it still to come.
    await new Promise((done) => setTimeout(done, 500));
    const signalledAt = Date.now();
    // A deploy signals the bin alone; Ctrl-C in a terminal signals its whole process group: the bin and
    // the worker process it runs (which the bin also forwards the signal to).
    if (asCtrlC) process.kill(-stopping.pid!, 'SIGINT');
    else stopping.kill('SIGTERM');
    await temporal().startWorker({
      taskQueue,
      activities: createActivities({ model: providerFor(server.url) }),
    });
    const exit = await stopping.done;
    const root = await untilTurns(service, service.rootThreadId, 1, 90_000);
    return {
      exit,
      stoppedAfterMs: Date.now() - signalledAt,
      root,
      requests: server.requests.map((request) => ({ aborted: request.aborted })),
      call: await modelCallOf(service.rootThreadId),
    };
  } finally {
    if (stopping.exitCode === null) process.kill(asCtrlC ? -stopping.pid! : stopping.pid!, 'SIGKILL');
    await server.close();
  }
}

/** The identity of the worker this process runs (Temporal's default, `pid@host`). */
const thisWorker = `${process.pid}@${hostname()}`;

test('by default a stopping worker lets the model call it is streaming finish, then exits', async () => {
  const { exit, root, requests, call } = await stopMidCall({});
  // Asked once, answered in full, on the first attempt of the stopping worker.
  expect(requests).toEqual([{ aborted: false }]);
  expect(root.latestTurn).toMatchObject({ status: 'completed', result: longText });
  expect(call).toMatchObject({ scheduled: 1, attempts: [1], completed: 1 });
  expect(call.identities).not.toContain(thisWorker);
  expect(exit.code).toBe(0);
  expect(exit.stderr).toContain(
    'stopping: no new tasks; running model calls and tools get up to 20 s to finish (AGENTS_KIT_SHUTDOWN_GRACE_MS)',
  );
  expect(exit.stderr).toContain('worker stopped');
}, 180_000);

test('with AGENTS_KIT_SHUTDOWN_GRACE_MS=0 the call is cut off and asked again on another worker', async () => {
  const { exit, root, requests, call } = await stopMidCall({ AGENTS_KIT_SHUTDOWN_GRACE_MS: '0' });
  expect(exit.code).toBe(0);
  expect(exit.stderr).toContain('running model calls and tools are cancelled and retried elsewhere');
  expect(requests).toEqual([{ aborted: true }, { aborted: false }]);
  expect(root.latestTurn).toMatchObject({ status: 'completed', result: longText });
  expect(call).toMatchObject({ scheduled: 1, attempts: [2], completed: 1, identities: [thisWorker] });
}, 180_000);

test("Ctrl-C (the process group's SIGINT, twice over for the worker process) drains it the same way", async () => {
  const { exit, root, requests, call } = await stopMidCall({}, true);
  expect(requests).toEqual([{ aborted: false }]);
  expect(root.latestTurn).toMatchObject({ status: 'completed', result: longText });
  expect(call).toMatchObject({ scheduled: 1, attempts: [1], completed: 1 });
  expect(exit.code).toBe(0);
  expect(exit.stderr).toContain('worker stopped');
  expect(exit.stderr).not.toContain('stopping now');
}, 180_000);

/** The processes whose parent is `pid` and that have not exited (Linux /proc; a zombie has exited). */
function liveChildrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      const stat = statOf(Number(entry));
      return stat && stat.ppid === pid && stat.state !== 'Z' ? [Number(entry)] : [];
    });
}

/** A process's state letter and parent, from /proc/<pid>/stat; undefined once it is gone. */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    // "pid (comm) state ppid …": the command may hold spaces and parentheses, so read after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

test('a SIGKILL of `agents-kit worker` takes the worker process it started (for the heap cap) with it', async () => {
  const taskQueue = uniqueTaskQueue('wrapper');
  const bin = startCli(['worker', '--workflow-bundle', workflowBundlePath()], {
    TEMPORAL_ADDRESS: temporal().address,
    AGENTS_KIT_TASK_QUEUE: taskQueue,
    // No heap cap of the caller's: the bin starts the worker in a process of its own with one.
    NODE_OPTIONS: undefined,
  });
  try {
    await untilOutput(bin, new RegExp(`worker polling task queue ${taskQueue}`));
    const [worker] = liveChildrenOf(bin.pid!);
    expect(worker).toBeDefined();
    bin.kill('SIGKILL');
    await eventually(
      async () => statOf(worker!)?.state ?? 'gone',
      (state) => state === 'gone' || state === 'Z',
      'the worker process to stop after its launcher was killed',
    );
  } finally {
    if (bin.exitCode === null) bin.kill('SIGKILL');
  }
}, 120_000);
