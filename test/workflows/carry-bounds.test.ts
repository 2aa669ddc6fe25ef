// SPEC S3.10 / S7.3: legitimate load at the continue-as-new point cannot push a root run's carried
// state past Temporal's 2 MiB input limit. Eight sub-agents each make one legal spawn of a ~480 kB
// spec while the root is continuing as new: before, the queued requests and their child starts were
// all carried into the next run, whose input passed 2 MiB, and the server terminated the root.
import type { AgentThread } from '../../domain/schemas';
import { attachRun, eventually } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('carry-bounds');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/**
 * A legal spec of ~480 kB: task, instructions and a forked history, each within its own limit. A client's
 * update may carry 160 KiB at most, so the child's script holds only placeholders: each is filled with
 * the 95,000-character message that starts the child's turn.
 */
const text = (size: number) => 'x'.repeat(size);
const bigSpec = (index: number) => ({
  name: 'big',
  task: `grandchild ${index}: {{inbox}}`,
  instructions: '{{inbox}}',
  history: [
    { role: 'user' as const, text: '{{inbox}}' },
    { role: 'assistant' as const, text: '{{inbox}}' },
    { role: 'user' as const, text: '{{inbox}}' },
  ],
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: `big ${index} done` }]] },
});

test('eight 480 kB spawns at the continue-as-new point: the root continues as new, nothing is lost', async () => {
  const threshold = 300;
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: threshold });
  const root = service.rootControls();
  // Eight children, idle after a first turn; their second turn spawns a big grandchild.
  const children: AgentThread[] = [];
  for (let index = 0; index < 8; index++) {
    children.push(
      await root.spawn({
        name: `child-${index}`,
        task: `spawn grandchild ${index} when asked`,
        kernel: {
          type: 'scripted',
          turns: [
            [{ type: 'reply', text: 'ready' }],
            [
              { type: 'spawn', as: 'big', request: bigSpec(index) },
              { type: 'wait', on: ['big'] },
              { type: 'reply', text: `child ${index} done` },
            ],
          ],
        },
      }),
    );
  }
  await eventually(
    () => root.listThreads(),
    (listed) => children.every((child) => listed.find((thread) => thread.id === child.id)?.status === 'idle'),
    'the children to be idle',
  );
  // Bring the root's history to just short of its continue-as-new point with cheap updates, so the
  // eight triggers below cross it and the big spawns arrive while the root prepares to continue.
  const historyLength = async () => Number((await service.handle.describe()).historyLength);
  while ((await historyLength()) < threshold - 30)
    await root.wait({ threadIds: [children[0]!.id], timeoutMs: 0 });
  await Promise.all(
    children.map((child) =>
      root.sendMessage({ recipient: child.id, content: text(95_000), triggerTurn: true }),
    ),
  );
  const threads = await eventually(
    () => root.listThreads(),
    (listed) =>
      listed.filter((thread) => thread.path.endsWith('/big') && thread.turnsCompleted === 1).length === 8 &&
      children.every((child) => listed.find((thread) => thread.id === child.id)?.turnsCompleted === 2),
    "every child's second turn and every grandchild's first",
    240_000,
  );
  for (const child of children) {
    const grandchild = threads.find((thread) => thread.parentId === child.id);
    expect(grandchild?.turnsCompleted).toBe(1);
    // Its spec was the ~480 kB one (the registry may keep its task clipped).
    expect(grandchild?.task.startsWith('grandchild ')).toBe(true);
    expect(threads.find((thread) => thread.id === child.id)?.latestTurn?.result).toMatch(/^child \d done$/);
  }
  expect((await service.counters()).total).toBe(16);
  // The root is alive, and its current run was continued from an earlier one.
  const description = await service.handle.describe();
  expect(description.status.name).toBe('RUNNING');
  const history = await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory();
  expect(
    history.events?.some((event) => event.workflowExecutionStartedEventAttributes?.continuedExecutionRunId),
  ).toBe(true);
  await service.shutdown();
}, 300_000);
