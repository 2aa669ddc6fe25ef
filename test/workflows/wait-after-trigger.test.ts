// SPEC S4.3, S4.7: a message that asks an idle thread for a turn goes straight to the thread's workflow,
// and the root hears of the turn's start a moment later. A `wait` sent right after the message used to
// find the thread still idle in the root's registry and answer at once with the turn before (seen from
// outside in 2 of 3 rounds, and in the README's quick start). The receipt now says which turn takes the
// message, and a wait counts that thread once that turn has ended: the root controls remember it, and a
// raw wait passes it as `turns`.
import { ThreadControls } from '../../client/thread-controls';
import { patchesOf } from '../helpers/histories';
import { attachRun, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('wait-after-trigger');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/** A sub-agent that answers each turn with the messages it took. */
const echo = {
  name: 'echo',
  task: 'repeat what you are told',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'heard: {{inbox}}' }]] },
};

test('a wait right after a triggering message answers with the turn that took it', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const controls = service.rootControls();
  const agent = await controls.spawn(echo);
  await untilTurns(service, agent.id, 1);
  // The root counts a thread waited for at a turn once that turn has ended: idle at turn 1, it does not.
  const elsewhere = new ThreadControls(service.handle, service.rootCapability);
  const early = await elsewhere.wait({ threadIds: [agent.id], turns: { [agent.id]: 2 }, timeoutMs: 1_500 });
  expect(early).toMatchObject({ timedOut: true, outcomes: [{ status: 'idle', latestTurn: { turn: 1 } }] });
  for (let round = 0; round < 4; round++) {
    const sent = await controls.sendMessage({
      recipient: agent.id,
      content: `round ${round}`,
      triggerTurn: true,
    });
    expect(sent.turn).toBe(round + 2);
    // The same controls: they remember the turn the message asked for.
    const { timedOut, outcomes } = await service
      .rootControls()
      .wait({ threadIds: [agent.id], timeoutMs: 60_000 });
    expect(timedOut).toBe(false);
    expect(outcomes[0]?.latestTurn).toMatchObject({ turn: sent.turn, result: `heard: round ${round}` });
    // The wait told the root which turn (whether or not its start had reached the root by then).
    expect((await waitRequests(service.rootThreadId)).at(-1)).toMatchObject({
      turns: { [agent.id]: sent.turn },
    });
  }
  // Controls that did not send it (another process, say) pass the receipt's turn themselves.
  const sent = await controls.sendMessage({ recipient: agent.id, content: 'from afar', triggerTurn: true });
  const { outcomes } = await elsewhere.wait({
    threadIds: [agent.id],
    turns: { [agent.id]: sent.turn! },
    timeoutMs: 60_000,
  });
  expect(outcomes[0]?.latestTurn).toMatchObject({ turn: sent.turn, result: 'heard: from afar' });
  // A message that asks for no turn says none; a turn for a thread not waited on is refused.
  expect(
    (await controls.sendMessage({ recipient: agent.id, content: 'just so you know' })).turn,
  ).toBeUndefined();
  const refused = await kitErrorOf(
    elsewhere.wait({ threadIds: [agent.id], turns: { [service.rootThreadId]: 1 }, timeoutMs: 0 }),
  );
  expect(`${refused.kind}: ${refused.message}`).toMatch(
    /^Protocol: .*every thread of `turns` is one of `threadIds`/,
  );
  await service.shutdown();
}, 180_000);

/**
 * A kernel's script that spawns the echo, waits for its first turn, then sends it a triggering message
 * and waits again: the second wait must answer with the turn that took the message.
 */
const sendThenWait = (label: string) => [
  { type: 'spawn' as const, as: label, request: echo },
  { type: 'wait' as const, on: [label], timeoutMs: 60_000 },
  { type: 'send' as const, to: label, content: `for ${label}`, triggerTurn: true },
  { type: 'wait' as const, on: [label], timeoutMs: 60_000 },
  { type: 'reply' as const, text: 'saw {{last}}' },
];

test("a kernel's wait after its own triggering message counts that message's turn (root and agent)", async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    root: {
      task: 'coordinate',
      name: 'root',
      kernel: {
        type: 'scripted',
        turns: [
          [
            {
              type: 'spawn',
              as: 'boss',
              request: {
                name: 'boss',
                task: 'delegate',
                kernel: { type: 'scripted', turns: [sendThenWait('helper')] },
              },
            },
            ...sendThenWait('echo').slice(0, 4),
            { type: 'wait', on: ['boss'], timeoutMs: 60_000 },
            { type: 'reply', text: 'boss said {{last}}' },
          ],
        ],
      },
    },
  });
  await untilTurns(service, service.rootThreadId, 1);
  const root = await service.refreshRoot();
  expect(root.latestTurn?.result).toBe('boss said saw heard: for helper');
  // The root's own wait told its turn accounting which turn (the patch's marker, on that path only)…
  const { events } = await temporal.client.workflow.getHandle(root.id).fetchHistory();
  expect(patchesOf(events ?? [])).toEqual(['rootWaitCountsAskedTurns']);
  // …and the boss's wait, a control request to the root, carried it.
  const threads = await service.rootControls().listThreads();
  const boss = threads.find((thread) => thread.name === 'boss')!;
  const helper = threads.find((thread) => thread.parentId === boss.id)!;
  expect(await controlWaits(root.id)).toContainEqual(
    expect.objectContaining({ threadIds: [helper.id], turns: { [helper.id]: 2 } }),
  );
  await service.shutdown();
}, 180_000);

/** The wait requests agents sent the root as `control-request` signals, oldest first. */
async function controlWaits(rootId: string): Promise<unknown[]> {
  const { events } = await temporal.client.workflow.getHandle(rootId).fetchHistory();
  return (events ?? []).flatMap((event) => {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    if (attributes?.signalName !== 'control-request') return [];
    const payloads = attributes.input?.payloads ?? [];
    return payloads.flatMap((payload) => {
      const request = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as {
        operation?: { type?: string; request?: unknown };
      };
      return request.operation?.type === 'wait' ? [request.operation.request] : [];
    });
  });
}

/** The requests of the wait updates in a root run's history, oldest first. */
async function waitRequests(rootId: string): Promise<unknown[]> {
  const { events } = await temporal.client.workflow.getHandle(rootId).fetchHistory();
  return (events ?? []).flatMap((event) => {
    const input = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (input?.name !== 'wait') return [];
    const payload = input.args?.payloads?.[1];
    return [JSON.parse(Buffer.from(payload!.data!).toString('utf8'))];
  });
}
