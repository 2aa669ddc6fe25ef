// SPEC S2, S7.6: during a rolling deploy an old worker may take the first task of a run that the new build
// started or continued as new, or replay one the new build has been running. Input only a newer build can
// read (fields this build does not know, a protocolVersion or snapshot schemaVersion above 1) fails the
// workflow task, which Temporal retries, instead of failing the run for good; a worker of the newer build
// then takes it and the run goes on. Input that is
// wrong, not only newer, still fails the run as Protocol at once. The inputs are real: each workflow
// type's start input from the v1 golden histories (a continued-as-new run's, carrying its snapshot, where
// one is recorded), with what a newer build would add.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../../activities';
import { pageRequestSignal } from '../../domain/conversation-messages';
import { ErrorKind } from '../../domain/errors';
import { createAgentWorker } from '../../workers/create-worker';
import { newerField } from '../deploy/newer-build-interceptors';
import { projectRoot } from '../helpers/paths';
import { eventually, untilClosed } from '../helpers/runs';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { bundleWith, suiteWorker, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('newer-input', (connected) => (temporal = connected));

type Input = Record<string, unknown>;

/** The start input recorded in golden history `file`. */
function recordedInput(file: string): Input {
  const fixture = JSON.parse(
    readFileSync(join(projectRoot, 'test', 'fixtures', 'histories', file), 'utf8'),
  ) as {
    history: {
      events: { workflowExecutionStartedEventAttributes: { input: { payloads: { data: string }[] } } }[];
    };
  };
  const data = fixture.history.events[0]!.workflowExecutionStartedEventAttributes.input.payloads[0]!.data;
  return JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as Input;
}

const agentInput = () => recordedInput('v1-agent-06-completed.json');
const pageInput = () => recordedInput('v1-conversation-page-01-completed.json');

async function start(type: string, input: Input, queue = taskQueue): Promise<string> {
  const workflowId = `newer-input-${type}-${started.length}-${Date.now()}`;
  await temporal.client.workflow.start(type, { taskQueue: queue, workflowId, args: [input] });
  started.push(workflowId);
  return workflowId;
}

/** The message of the run's first failed workflow task, once there is one. */
const failedTaskOf = async (workflowId: string): Promise<string> =>
  (
    await eventually(
      async () => failedTasks(await historyEvents(temporal.client, workflowId)),
      (failed) => failed.length > 0,
      `a failed workflow task in ${workflowId}`,
    )
  )[0]!;

test('a run whose input a newer build wrote fails its task and stays running, saying why', async () => {
  const agent = agentInput();
  const root = recordedInput('v1-root-run-02-continued_as_new.json');
  const page = pageInput();
  const cases: [type: string, input: Input, named: string][] = [
    ['agentWorkflow', { ...agent, [newerField]: 1 }, newerField],
    // A carried snapshot of a newer shape.
    [
      'agentWorkflow',
      { ...agent, resume: { ...(agent.resume as Input), schemaVersion: 2 } },
      'resume.schemaVersion 2',
    ],
    // The root's carried snapshot is parsed on its own: a field added inside it.
    ['rootRunWorkflow', { ...root, resume: { ...(root.resume as Input), [newerField]: 1 } }, newerField],
    [
      'conversationWorkflow',
      { ...recordedInput('v1-conversation-23-continued_as_new.json'), protocolVersion: 2 },
      'protocolVersion 2',
    ],
    [
      'conversationPageWorkflow',
      { ...page, entries: (page.entries as Input[]).map((entry) => ({ ...entry, [newerField]: 1 })) },
      `entries.0.${newerField}`,
    ],
  ];
  for (const [type, input, named] of cases) {
    const workflowId = await start(type, input);
    const message = await failedTaskOf(workflowId);
    expect([type, message]).toEqual([type, expect.stringContaining('newer agents-kit build')]);
    expect(message).toContain(named);
    const description = await temporal.client.workflow.getHandle(workflowId).describe();
    expect([type, description.status.name]).toEqual([type, 'RUNNING']);
  }
});

test('input that is wrong as well as newer fails the run as Protocol, with no failed task', async () => {
  const cases: [string, Input][] = [
    ['agentWorkflow', { ...agentInput(), [newerField]: 1, protocolVersion: 'one' }],
    ['conversationPageWorkflow', { ...pageInput(), [newerField]: 1, entries: 'none' }],
  ];
  for (const [type, input] of cases) {
    const workflowId = await start(type, input);
    expect(await untilClosed(temporal.client, workflowId)).toBe('FAILED');
    const events = await historyEvents(temporal.client, workflowId);
    const failure = events.find((event) => event.workflowExecutionFailedEventAttributes)
      ?.workflowExecutionFailedEventAttributes?.failure;
    expect([type, failure?.applicationFailureInfo?.type, failedTasks(events)]).toEqual([
      type,
      ErrorKind.Protocol,
      [],
    ]);
  }
});

test('a run the newer build started, reached mid-run by an old worker, waits for the newer build', async () => {
  const queue = uniqueTaskQueue('newer-input-deploy');
  const code = await bundleWith('newer-build-interceptors');
  const newerWorker = () =>
    createAgentWorker({
      connection: temporal.nativeConnection,
      taskQueue: queue,
      activities: createActivities(),
      workflows: { workflowBundle: { code } },
    });
  const handle = temporal.client.workflow.getHandle(
    await start('conversationPageWorkflow', { ...pageInput(), [newerField]: 1 }, queue),
  );
  // The newer build runs its first task: the page (recorded before page tokens) waits to be asked.
  await (
    await newerWorker()
  ).runUntil(() =>
    eventually(
      async () => JSON.stringify(await historyEvents(temporal.client, handle.workflowId)),
      (history) => history.includes('workflowTaskCompletedEventAttributes'),
      'the newer build to complete the first task',
    ),
  );
  // Only an old worker is left when the request comes: it replays the run, cannot read its input, and
  // fails the task; the run stays as it was.
  const old = await temporal.startWorker({ taskQueue: queue });
  await handle.signal(pageRequestSignal);
  expect(await failedTaskOf(handle.workflowId)).toContain(newerField);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  old.shutdown();
  await eventually(
    async () => old.getState(),
    (state) => state === 'STOPPED',
    'the old worker to stop',
  );
  // The newer build is back: a retry of the task reaches it, and the page delivers and completes.
  await (
    await newerWorker()
  ).runUntil(async () => {
    const closed = await eventually(
      async () => (await handle.describe()).status.name,
      (status) => status !== 'RUNNING',
      'the page to complete on the newer build',
      120_000,
    );
    expect(closed).toBe('COMPLETED');
  });
}, 240_000);
