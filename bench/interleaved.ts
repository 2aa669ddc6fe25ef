// `npx tsx bench/interleaved.ts [samples]`: sendMessage and interrupt against the bare update round
// trip, sample by sample in turn (update, sendMessage, interrupt, update, …), so machine load moves all
// three alike; `npm run bench` measures each in a block of its own, and on a shared machine the load
// between blocks moves its ratios by ±0.3×. Also prints each workflow task's time (scheduled → started,
// started → completed) from the histories, to tell the worker's share from the server's.
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ThreadService } from '../client/thread-service';
import { devServerPragmas, devServerSettings } from '../workers/dev-server';
import { openBench } from './harness';
import { echoUpdate, stopSignal } from './messages';
import { summarizeLatencies } from './stats';

const log = (line: string) => process.stderr.write(`[interleaved] ${line}\n`);
const samples = Number(process.argv[2] ?? 60);

const millis = (time: temporal.api.history.v1.IHistoryEvent['eventTime']) =>
  Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;

/** The last `count` workflow tasks of a workflow: queue wait and the worker's processing, in ms. */
async function workflowTasks(client: Client, workflowId: string, count: number) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const tasks: { queued: number; processing: number }[] = [];
  let scheduled = 0;
  let started = 0;
  for (const event of events) {
    const at = millis(event.eventTime);
    if (event.workflowTaskScheduledEventAttributes) scheduled = at;
    if (event.workflowTaskStartedEventAttributes) started = at;
    if (event.workflowTaskCompletedEventAttributes)
      tasks.push({ queued: started - scheduled, processing: at - started });
  }
  return tasks.slice(-count);
}

const p50 = (values: number[]) => summarizeLatencies(values).p50;

async function main(): Promise<void> {
  const bench = await openBench({
    runId: `interleaved-${Date.now()}`,
    serverSettings: { ...devServerSettings },
    sqlitePragmas: devServerPragmas,
    stepsPerTurn: 8,
    log,
  });
  const { client, taskQueue } = bench.context;
  try {
    const target = await client.workflow.start('benchTargetWorkflow', {
      taskQueue,
      workflowId: `interleaved-target-${Date.now()}`,
      args: [],
    });
    const reply = { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'ok' }]] };
    const service = await ThreadService.attach(client, {
      taskQueue,
      owner: 'bench',
      root: { task: 'interleaved', name: 'root', kernel: reply },
      grant: { owner: 'bench', idleTimeoutMs: 3_600_000 },
    });
    const controls = service.rootControls();
    const thread = await controls.spawn({ task: 'sink', name: 'sink', kernel: reply });
    await controls.wait({ threadIds: [thread.id], timeoutMs: 30_000 });
    const timed = async (call: () => Promise<unknown>) => {
      const start = Date.now();
      await call();
      return Date.now() - start;
    };
    const latency = { update: [] as number[], sendMessage: [] as number[], interrupt: [] as number[] };
    for (let index = 0; index < samples + 5; index++) {
      const update = await timed(() => target.executeUpdate(echoUpdate, { args: [index] }));
      const send = await timed(() => controls.sendMessage({ recipient: thread.id, content: `m${index}` }));
      const interrupt = await timed(() => controls.interrupt(thread.id));
      if (index < 5) continue; // warm-up
      latency.update.push(update);
      latency.sendMessage.push(send);
      latency.interrupt.push(interrupt);
    }
    const bare = await workflowTasks(client, target.workflowId, samples);
    const ours = await workflowTasks(client, thread.id, 2 * samples);
    const ratio = (values: number[]) => Math.round((p50(values) / p50(latency.update)) * 100) / 100;
    process.stdout.write(
      [
        `client p50: update ${p50(latency.update)} ms, sendMessage ${p50(latency.sendMessage)} ms (${ratio(latency.sendMessage)}×), interrupt ${p50(latency.interrupt)} ms (${ratio(latency.interrupt)}×)`,
        `workflow task p50, queued / processing: bare ${p50(bare.map((task) => task.queued))} / ${p50(bare.map((task) => task.processing))} ms, agent ${p50(ours.map((task) => task.queued))} / ${p50(ours.map((task) => task.processing))} ms`,
        '',
      ].join('\n'),
    );
    await target.signal(stopSignal);
  } finally {
    await bench.close();
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
