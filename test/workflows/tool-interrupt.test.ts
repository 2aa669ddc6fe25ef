// SPEC S4.6: an interrupt reaches a user tool (`defineTool`) running as an activity, whatever the tool
// does: the tool gets an AbortSignal, the call heartbeats for it (so a long call is not timed out by its
// heartbeat timeout either), and a call interrupted while it ran ends cancelled, so its turn ends
// `interrupted` and takes no further step, even when the tool ignored the signal and finished. One that
// ignores it for 10 s more is left running, and the call ends cancelled without it.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { createActivities, defineTool } from '../../activities';
import { abandonAfterAbortMs } from '../../activities/tools';
import type { ScriptStepShape } from '../../domain/schemas';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

/** What each call of the tools saw, by label. */
const started = new Set<string>();
const aborted = new Set<string>();
const finished = new Set<string>();
const input = z.object({ ms: z.number().int().min(0), label: z.string() }).strict();
/** Plain user code: no heartbeat, no Temporal API. One ignores its signal, one stops at it. */
const stubborn = defineTool({
  name: 'stubborn',
  description: 'Works for `ms`, ignoring interrupts.',
  input,
  run: async ({ ms, label }, { signal }) => {
    started.add(label);
    signal.addEventListener('abort', () => aborted.add(label));
    // Unref'd: one this suite leaves running does not keep the test process up.
    await delay(ms, undefined, { ref: false });
    finished.add(label);
    return `${label} done`;
  },
});
const polite = defineTool({
  name: 'polite',
  description: 'Works for `ms`, or until interrupted.',
  input,
  run: async ({ ms, label }, { signal }) => {
    started.add(label);
    await delay(ms, undefined, { signal }).catch(() => aborted.add(label));
    if (!signal.aborted) finished.add(label);
    return `${label} done`;
  },
});

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('tool-interrupt');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [stubborn, polite] }) });
});
afterAll(async () => temporal?.close());

const script = (...steps: ScriptStepShape[]) => ({ type: 'scripted' as const, turns: [steps] });
const toolStep = (tool: string, ms: number, label: string): ScriptStepShape => ({
  type: 'tool',
  tool,
  input: { ms, label },
});

test('an interrupt while a tool that ignores it runs ends the turn interrupted once the tool is done', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const label = randomUUID();
  const agent = await root.spawn({
    task: 'work',
    kernel: script(toolStep('stubborn', 6_000, label), { type: 'reply', text: 'should not be said' }),
  });
  await eventually(async () => started.has(label), Boolean, 'the tool to start');
  expect(await root.interrupt(agent.id)).toEqual({
    thread: agent.id,
    cancellationRequested: true,
    interruptedTurn: 1,
  });
  await eventually(async () => aborted.has(label), Boolean, 'the tool to see its signal abort');
  const ended = await untilTurns(service, agent.id, 1);
  expect(finished.has(label)).toBe(true);
  expect(ended.latestTurn?.status).toBe('interrupted');
  expect(ended.latestTurn?.result).toBeUndefined();
  await service.shutdown();
}, 60_000);

test('a tool that ignores an interrupt for 10 s more is left running: the turn ends interrupted without it', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const label = randomUUID();
  const agent = await root.spawn({
    task: 'work',
    kernel: script(toolStep('stubborn', 600_000, label), { type: 'reply', text: 'should not be said' }),
  });
  await eventually(async () => started.has(label), Boolean, 'the tool to start');
  const interruptedAt = Date.now();
  await root.interrupt(agent.id);
  // Well before the tool's 10 minutes, once abandonAfterAbortMs has passed.
  const ended = await untilTurns(service, agent.id, 1, 120_000);
  expect(Date.now() - interruptedAt).toBeGreaterThanOrEqual(abandonAfterAbortMs);
  expect(ended.latestTurn?.status).toBe('interrupted');
  expect([aborted.has(label), finished.has(label)]).toEqual([true, false]);
  // The tree shuts down, the tool's work still going on.
  expect(await service.shutdown()).toMatchObject({ cancelled: [agent.id], unconfirmed: [] });
}, 150_000);

test('an interrupt stops a tool that listens to its signal at once', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const label = randomUUID();
  const agent = await root.spawn({
    task: 'work',
    kernel: script(toolStep('polite', 600_000, label), { type: 'reply', text: 'should not be said' }),
  });
  await eventually(async () => started.has(label), Boolean, 'the tool to start');
  await root.interrupt(agent.id);
  // Well before the tool's 10 minutes: the interrupt reached it.
  expect((await untilTurns(service, agent.id, 1)).latestTurn?.status).toBe('interrupted');
  expect([aborted.has(label), finished.has(label)]).toEqual([true, false]);
  await service.shutdown();
}, 60_000);

test('a tool call longer than its heartbeat timeout (30 s) is not timed out: the call heartbeats for it', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const label = randomUUID();
  const agent = await root.spawn({
    task: 'work long',
    kernel: script(toolStep('stubborn', 40_000, label), { type: 'reply', text: '{{last}}' }),
  });
  const ended = await untilTurns(service, agent.id, 1, 120_000);
  expect(ended.latestTurn).toMatchObject({ status: 'completed', result: `${label} done` });
  await service.shutdown();
}, 150_000);
