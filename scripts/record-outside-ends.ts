// Scenarios of scripts/record-histories.ts, agents ended from outside agents-kit. `--cancel-subtree`
// (patch `cancelClosesSubtree`): an agent with a live sub-agent is cancelled (Temporal's cancel
// request); when its end reaches the root run, the root closes the sub-agent, as a close of the agent
// would have. `--child-close` (patch `childCloseEnds`): an agent's workflow is terminated; the root ends
// it as failed when Temporal tells it the child closed. `--outside-ends` (patch `outsideEndsWindDown`):
// a terminated agent's sub-agent is closed and its conversation told; an agent terminated after its
// root continued as new is found gone by the shutdown's close. `--earlier-ends`, `--earlier-ends-wait`,
// `--outside-ends-check`: below.
import type { Client } from '@temporalio/client';
import { ThreadControls } from '../client/thread-controls';
import type { AttachOptions } from '../client/thread-service';
import type { SpawnRequestInput } from '../domain/schemas';
import {
  attachRun,
  eventually,
  askingAgent,
  idleAgent,
  leadWithHelper,
  untilClosed,
  untilTurns,
} from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordCancelClosesSubtree(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue);
  const { lead, helper } = await leadWithHelper(service);
  await client.workflow.getHandle(lead.id).cancel();
  const closed = await eventually(
    async () => (await client.workflow.getHandle(helper.id).describe()).status.name,
    (status) => status !== 'RUNNING',
    'the helper to be closed',
  );
  log(`cancelled the lead; its helper: ${closed}`);
  await service.shutdown();
}

export async function recordChildCloseEnds(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue);
  const root = service.rootControls();
  const doomed = await root.spawn({
    name: 'doomed',
    task: 'answer once',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'done' }]] },
  });
  await untilTurns(service, doomed.id, 1);
  await client.workflow.getHandle(doomed.id).terminate('stuck, says the operator');
  const ended = await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'failed',
    'the root to end the terminated agent',
  );
  log(`terminated an agent; the root lists it ${ended?.status}`);
  await service.shutdown();
}

export async function recordOutsideEndsWindDown(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const { lead, helper } = await leadWithHelper(service);
  await client.workflow.getHandle(lead.id).terminate('stuck, says the operator');
  const closed = await eventually(
    async () => (await client.workflow.getHandle(helper.id).describe()).status.name,
    (status) => status !== 'RUNNING',
    "the terminated lead's helper to be closed",
  );
  log(`terminated the lead; its helper: ${closed}`);
  const runOf = async () => (await client.workflow.getHandle(service.rootThreadId).describe()).runId;
  const firstRun = await runOf();
  const idle = { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] };
  const doomed = await root.spawn({ name: 'doomed', task: 'answer once', kernel: idle });
  for (let index = 0; index < 12; index++)
    await root.spawn({ name: `filler-${index}`, task: 'answer once', kernel: idle });
  await eventually(runOf, (run) => run !== firstRun, 'the root to continue as new');
  await client.workflow.getHandle(doomed.id).terminate('stuck, says the operator');
  log(`terminated an agent of the root's earlier run; shutdown: ${JSON.stringify(await service.shutdown())}`);
}

/**
 * A root run that continues as new after 100 events, with one agent `doomed` whose first turn has ended
 * and whose messages have pushed the root into its next run.
 */
async function doomedOfEarlierRun(
  client: Client,
  taskQueue: string,
  grant: { maxConcurrent?: number },
  spec: SpawnRequestInput,
  options: Partial<AttachOptions> = {},
) {
  const service = await attachRun(client, taskQueue, {
    continueAsNewAfterEvents: 100,
    ...options,
    grant: { owner: 'tests', idleTimeoutMs: 600_000, ...grant },
  });
  const root = service.rootControls();
  const doomed = await root.spawn(spec);
  await untilTurns(service, doomed.id, 1);
  const runOf = async () => (await client.workflow.getHandle(service.rootThreadId).describe()).runId;
  const firstRun = await runOf();
  const asDoomed = new ThreadControls(service.handle, await service.capabilityOf(doomed.id));
  for (let n = 0; (await runOf()) === firstRun && n < 500; n++)
    await asDoomed.sendMessage({ recipient: service.rootThreadId, content: `m${n}` });
  return { service, root, doomed };
}

/**
 * `--earlier-ends` (patch `earlierRunEndsChecked`): with room for one agent, an agent terminated after
 * its root continued as new; the next spawn, refused for room, makes the root ask and is admitted.
 */
export async function recordEarlierRunEnds(client: Client, taskQueue: string): Promise<void> {
  const { service, root, doomed } = await doomedOfEarlierRun(
    client,
    taskQueue,
    { maxConcurrent: 1 },
    idleAgent('doomed'),
  );
  await client.workflow.getHandle(doomed.id).terminate('stuck, says the operator');
  await untilClosed(client, doomed.id);
  const next = await root.spawn(idleAgent('next'));
  await untilTurns(service, next.id, 1);
  log(`a spawn after the earlier run's agent was terminated: ${next.id}`);
  await service.shutdown();
}

/**
 * `--earlier-ends-wait` (patch `earlierRunEndsOnWait`): an agent of the root's earlier run, terminated
 * mid-turn (waiting for an answer); a wait on it asks first and answers it failed.
 */
export async function recordEarlierRunEndsOnWait(client: Client, taskQueue: string): Promise<void> {
  const { service, root, doomed } = await doomedOfEarlierRun(client, taskQueue, {}, askingAgent('doomed'));
  await root.sendMessage({ recipient: doomed.id, content: 'go on', triggerTurn: true });
  await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'running',
    'the root to list the agent running',
  );
  await client.workflow.getHandle(doomed.id).terminate('stuck, says the operator');
  await untilClosed(client, doomed.id);
  log(
    `a wait on the terminated agent: ${JSON.stringify(await root.wait({ threadIds: [doomed.id], timeoutMs: 40_000 }))}`,
  );
  await service.shutdown();
}

/**
 * `--outside-ends-check` (the `outsideEndsCheckMs` feature of the root's input): an idle agent of the
 * root's earlier run, terminated; the root's own check (every 2 s) finds it, with no operation asking.
 */
export async function recordOutsideEndsCheck(client: Client, taskQueue: string): Promise<void> {
  const { service, root, doomed } = await doomedOfEarlierRun(client, taskQueue, {}, idleAgent('doomed'), {
    outsideEndsCheckMs: 2_000,
  });
  await client.workflow.getHandle(doomed.id).terminate('stuck, says the operator');
  const found = await eventually(
    () => root.loadThread(doomed.id),
    (thread) => thread?.status === 'failed',
    "the root's check to find the terminated agent",
  );
  log(`the root's check listed the terminated agent ${found?.status}`);
  await service.shutdown();
}
