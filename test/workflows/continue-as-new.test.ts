import { createActivities } from '../../activities';
import { mailboxQuery } from '../../domain/messages';
import type { AgentThread } from '../../domain/schemas';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { slowTool } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('can');
const slow = slowTool();
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [slow.tool] }) });
});
afterAll(async () => temporal?.close());

async function runsOf(workflowId: string): Promise<string[]> {
  const statuses: string[] = [];
  for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
    statuses.push(execution.status.name);
  return statuses;
}

test('30 threads and 500 messages across several continue-as-new: nothing lost, counters exact, every thread still controllable', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    continueAsNewAfterEvents: 300,
    grant: { owner: 'tests', maxConcurrent: 30, maxTotal: 30 },
  });
  const root = service.rootControls();
  const threads: AgentThread[] = [];
  for (let index = 0; index < 30; index++) {
    threads.push(
      await root.spawn({
        task: `worker ${index}`,
        name: `w${index}`,
        kernel: {
          type: 'scripted',
          turns: [
            [{ type: 'reply', text: 'ready' }],
            [
              { type: 'send', to: 'root', content: 'report from {{inbox}}' },
              { type: 'reply', text: 'saw {{inbox}}' },
            ],
          ],
        },
      }),
    );
  }
  // Every thread's first turn has taken its inbox before the messages start, so all of them wait.
  await eventually(
    () => root.listThreads(),
    (all) => all.every((thread) => thread.turnsStarted >= 1),
    'first turns',
  );
  // 500 messages, 5 at a time, round-robin over the threads; none triggers a turn.
  const sent = new Map<string, string[]>();
  for (let batch = 0; batch < 100; batch++) {
    await Promise.all(
      Array.from({ length: 5 }, async (_, offset) => {
        const index = batch * 5 + offset;
        const recipient = threads[index % threads.length]!;
        const content = `m${index}`;
        await root.sendMessage({ recipient: recipient.id, content });
        sent.set(recipient.id, [...(sent.get(recipient.id) ?? []), content]);
      }),
    );
  }
  for (const thread of threads) {
    const expected = sent.get(thread.id)!;
    const { received } = await eventually(
      () => temporal.client.workflow.getHandle(thread.id).query(mailboxQuery),
      (view) => view.received.length >= expected.length,
      `deliveries to ${thread.name}`,
    );
    expect(received.map((message) => message.seq)).toEqual(expected.map((_, index) => index + 1));
    expect(new Set(received.map((message) => message.content))).toEqual(new Set(expected));
  }
  expect(await service.counters()).toMatchObject({ live: 30, total: 30 });
  // Visibility is eventually consistent: wait until it lists the closed runs.
  const rootRuns = await eventually(
    () => runsOf(service.rootThreadId),
    (runs) => runs.filter((status) => status === 'CONTINUED_AS_NEW').length >= 3,
    'root runs',
  );
  const history = await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory();
  expect(history.events!.length).toBeLessThan(600);

  // Every thread is still under control after the root (and maybe itself) continued-as-new.
  const target = threads[7]!;
  await root.sendMessage({ recipient: target.id, content: 'go', triggerTurn: true });
  const second = await untilTurns(service, target.id, 2);
  expect(second.latestTurn?.result).toMatch(/^saw m7\n/);
  const reports = await service.takeRootMessages();
  expect(reports.map((message) => message.sender)).toEqual([target.id]);
  const waited = await root.wait({ threadIds: [target.id, threads[8]!.id], timeoutMs: 0 });
  expect(waited.timedOut).toBe(false);
  const report = await service.shutdown();
  expect(report.cancelled).toHaveLength(30);
  expect(report).toMatchObject({ failed: [], unconfirmed: [] });
  void rootRuns;
});

test('a steady stream of updates cannot hold the root back from continuing-as-new; none is refused or lost', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const sink = await service.rootControls().spawn({ task: 'collect', name: 'sink' });
  const total = 1_800;
  let next = 0;
  // Eight senders keep updates in flight all the time, past the per-run update budget.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let index = next++; index < total; index = next++) {
        await service.rootControls().sendMessage({ recipient: sink.id, content: `s${index}` });
      }
    }),
  );
  const runs = await eventually(
    () => runsOf(service.rootThreadId),
    (statuses) => statuses.includes('CONTINUED_AS_NEW'),
    'a continue-as-new',
  );
  expect(runs.length).toBeGreaterThanOrEqual(2);
  for await (const execution of temporal.client.workflow.list({
    query: `WorkflowId = "${service.rootThreadId}"`,
  })) {
    const history = await temporal.client.workflow
      .getHandle(service.rootThreadId, execution.runId)
      .fetchHistory();
    const events = history.events ?? [];
    expect(events.length).toBeLessThan(10_240);
    expect(
      events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes).length,
    ).toBeLessThan(2_000);
  }
  const { received } = await eventually(
    () => temporal.client.workflow.getHandle(sink.id).query(mailboxQuery),
    (view) => view.received.length >= total - 1000,
    'deliveries',
    120_000,
  );
  // The mailbox view keeps the latest 1,000 consumed plus everything waiting: here all are waiting.
  expect(received.map((message) => message.seq)).toEqual(
    Array.from({ length: received.length }, (_, index) => index + 1),
  );
  expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
}, 300_000);
