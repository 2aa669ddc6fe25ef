// SPEC S11.4 with S7.1: a worker SIGKILLed while an approval waits, right after an "always allow" answer
// and right after a policy change loses none of them: the tree's policy, what was remembered and the
// pending approval all come back with the restarted worker.
import { Client, Connection } from '@temporalio/client';
import { connectTest } from '../helpers/connection';
import { resolveNotification } from '../../client/conversations';
import { RootInbox, scripted } from '../helpers/approvals';
import { attachRun, untilTurns } from '../helpers/runs';
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

const publish = (title: string) => ({ type: 'tool' as const, tool: 'publish', input: { title } });

test('the policy, a remembered answer and a pending approval survive worker crashes', async () => {
  const taskQueue = uniqueTaskQueue('approval-crash');
  worker = new WorkerProcess(testServerAddress(), taskQueue, workflowBundlePath());
  await worker.start();
  const crash = async () => {
    await worker.kill();
    await worker.start();
  };
  const client = new Client({ connection });
  const service = await attachRun(client, taskQueue, { approvalPolicy: { alwaysAsk: ['echo'] } });
  const inbox = await RootInbox.open(client, service, taskQueue);
  const root = service.rootControls();
  const first = await root.spawn({ name: 'first', task: 'publish', kernel: scripted([publish('a')]) });
  const asked = await inbox.interaction(first.id);
  await crash();
  await resolveNotification(
    client,
    asked,
    { type: 'approval', approved: true, remember: true },
    { capability: service.rootCapability },
  );
  await crash();
  expect((await untilTurns(service, first.id, 1)).latestTurn?.result).toBe('published "a"');
  const second = await root.spawn({ name: 'second', task: 'publish', kernel: scripted([publish('b')]) });
  const echoer = await root.spawn({
    name: 'echoer',
    task: 'echo',
    kernel: scripted([{ type: 'tool', tool: 'echo', input: 'after the crash' }]),
  });
  expect((await untilTurns(service, second.id, 1)).latestTurn?.result).toBe('published "b"');
  const echoCall = await inbox.interaction(echoer.id);
  await crash();
  expect(await service.setApprovalPolicy({ alwaysAsk: [], neverAsk: ['echo'] })).toEqual({
    version: 2,
    neverAsk: ['echo'],
    alwaysAsk: [],
    remembered: ['publish'],
  });
  await crash();
  expect((await untilTurns(service, echoer.id, 1)).latestTurn?.result).toBe('after the crash');
  expect((await inbox.settlement(echoCall.body.requestId)).body).toMatchObject({
    detail: expect.stringContaining('by the approval policy (never-ask)'),
  });
  expect(await service.approvalPolicy()).toMatchObject({ version: 2, remembered: ['publish'] });
  expect(inbox.interactions.map((item) => item.body.threadId)).toEqual([first.id, echoer.id]);
  expect(worker.kills).toBe(4);
  await inbox.close();
  await service.shutdown();
}, 240_000);
