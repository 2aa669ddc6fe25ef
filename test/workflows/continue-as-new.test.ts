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
    continueAsNewAfterEvents: 100,
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
  // The root (30 spawns and their reports) and the threads (the messages go to them, SPEC S3.1) have
  // continued as new.
  const rootRuns = await eventually(
    () => runsOf(service.rootThreadId),
    (runs) => runs.includes('CONTINUED_AS_NEW'),
    'root runs',
  );
  const threadRuns = await eventually(
    async () => (await Promise.all(threads.map((thread) => runsOf(thread.id)))).flat(),
    (runs) => runs.filter((status) => status === 'CONTINUED_AS_NEW').length >= 3,
    'thread runs',
  );
  expect(threadRuns.length).toBeGreaterThan(30);
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

test('a steady stream of updates cannot hold a thread back from continuing-as-new; none is refused or lost', async () => {
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
  // The updates go to the sink's own workflow (SPEC S3.1): it is the one that must continue as new.
  const runs = await eventually(
    () => runsOf(sink.id),
    (statuses) => statuses.includes('CONTINUED_AS_NEW'),
    'a continue-as-new',
  );
  expect(runs.length).toBeGreaterThanOrEqual(2);
  for await (const execution of temporal.client.workflow.list({
    query: `WorkflowId = "${sink.id}"`,
  })) {
    const history = await temporal.client.workflow.getHandle(sink.id, execution.runId).fetchHistory();
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
  // The mailbox view keeps the latest consumed plus everything waiting: here all are waiting.
  expect(received.map((message) => message.seq)).toEqual(
    Array.from({ length: received.length }, (_, index) => index + 1),
  );
  expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
}, 300_000);

test('long answers turn after turn: every continue-as-new input stays under 2 MiB and the latest answer is whole (S7.5)', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const answer = (turn: number) => `answer ${turn}: ${'a long model answer '.repeat(4_000)}`; // ~80 KB
  const writer = await root.spawn({
    task: 'answer at length',
    name: 'writer',
    kernel: {
      type: 'scripted',
      // The last script repeats for every later turn: 30 answers of ~80 KB from a 160 KB spec.
      turns: [[{ type: 'reply', text: answer(1) }], [{ type: 'reply', text: answer(2) }]],
    },
  });
  for (let turn = 1; turn <= 30; turn++) {
    if (turn > 1) await root.sendMessage({ recipient: writer.id, content: `go ${turn}`, triggerTurn: true });
    await untilTurns(service, writer.id, turn);
  }
  const latest = (await root.loadThread(writer.id))!;
  expect(latest.latestTurn?.result).toBe(answer(2));
  expect(latest.latestTurn?.turn).toBe(30);
  expect(latest.firstTurn?.result).toBe(answer(1));
  // Every run of the agent and the root that continued as new carried an input under Temporal's limit.
  let continued = 0;
  for (const workflowId of [writer.id, service.rootThreadId]) {
    for await (const execution of temporal.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      const events =
        (await temporal.client.workflow.getHandle(workflowId, execution.runId).fetchHistory()).events ?? [];
      const next = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
      if (!next) continue;
      continued++;
      const bytes = (next.input?.payloads ?? []).reduce(
        (sum, payload) => sum + (payload.data?.length ?? 0),
        0,
      );
      expect(bytes).toBeLessThan(2 * 1024 * 1024);
    }
  }
  expect(continued).toBeGreaterThanOrEqual(2);
}, 300_000);
