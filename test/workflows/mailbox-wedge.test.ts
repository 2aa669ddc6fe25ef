// SPEC S3.10: a mailbox filled by messages that ask for no turn still takes the one short message that
// asks for the turn which takes them, by a client's update and by another agent's control request;
// nothing more until that turn runs. Before, that message was refused too and the thread was wedged.
import { KitError } from '../../domain/errors';
import { mailboxQuery } from '../../domain/messages';
import type { ScriptStepShape } from '../../domain/schemas';
import type { ThreadControls } from '../../client/thread-service';
import { attachRun, kitErrorOf, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('mailbox-wedge');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const script = (...turns: ScriptStepShape[][]) => ({ type: 'scripted' as const, turns });
/** A first turn that holds the thread busy until it is interrupted, so messages wait meanwhile. */
const busyTurn: ScriptStepShape[] = [{ type: 'tool', tool: 'sleep', input: { ms: 3_600_000 } }];

/** Sends messages that ask for no turn until the recipient refuses one: its mailbox is full. */
async function fill(
  controls: ThreadControls,
  recipient: string,
): Promise<{ sent: number; refusal: KitError }> {
  let sent = 0;
  for (const content of ['long message '.repeat(7_690), 'x']) {
    for (;;) {
      const refusal = await controls.sendMessage({ recipient, content }).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (refusal === undefined) sent += 1;
      else if (refusal instanceof KitError && refusal.kind === 'QuotaExceeded') break;
      else throw refusal;
    }
  }
  const refusal = await kitErrorOf(controls.sendMessage({ recipient, content: 'x' }));
  return { sent, refusal };
}

test('a client fills a busy thread`s mailbox; one short triggerTurn message still goes in, and its turn takes them all', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const reader = await root.spawn({
    task: 'read long mail',
    kernel: script(busyTurn, [{ type: 'reply', text: 'read them' }]),
  });
  const { sent, refusal } = await fill(root, reader.id);
  expect(refusal.kind).toBe('QuotaExceeded');
  expect(refusal.message).toMatch(/send one with triggerTurn and at most 1024 bytes of content/);
  // Too long for the room: refused as before.
  const long = await kitErrorOf(
    root.sendMessage({ recipient: reader.id, content: 'y'.repeat(2_000), triggerTurn: true }),
  );
  expect(long.kind).toBe('QuotaExceeded');
  const asked = await root.sendMessage({ recipient: reader.id, content: 'read them now', triggerTurn: true });
  expect(asked.seq).toBe(sent + 1);
  // The turn is asked for: nothing more goes in until it takes them, a second ask included.
  const again = await kitErrorOf(
    root.sendMessage({ recipient: reader.id, content: 'again', triggerTurn: true }),
  );
  expect(again.kind).toBe('QuotaExceeded');
  expect(again.message).toMatch(/already asked for and takes them: wait for it/);
  await root.interrupt(reader.id);
  const turn = await untilTurns(service, reader.id, 2);
  expect(turn.latestTurn?.result).toBe('read them');
  const { received } = await temporal.client.workflow.getHandle(reader.id).query(mailboxQuery);
  // The consumed log keeps the latest of them: all taken by turn 2, the ask last.
  expect(new Set(received.map((message) => message.consumedInTurn))).toEqual(new Set([2]));
  expect(received.at(-1)).toMatchObject({ seq: sent + 1, content: 'read them now', consumedInTurn: 2 });
  expect((await root.sendMessage({ recipient: reader.id, content: 'room again' })).seq).toBe(sent + 2);
}, 300_000);

test('an agent`s triggerTurn message (a control request) also takes the room of its child`s full mailbox', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const parent = await root.spawn({
    task: 'look after a kid',
    name: 'parent',
    kernel: script(
      [
        {
          type: 'spawn',
          as: 'kid',
          request: {
            task: 'wait',
            name: 'kid',
            kernel: script(busyTurn, [{ type: 'reply', text: 'kid read them' }]),
          },
        },
        { type: 'reply', text: 'spawned' },
      ],
      [
        { type: 'send', to: 'kid', content: 'take your mail', triggerTurn: true },
        { type: 'reply', text: 'asked' },
      ],
    ),
  });
  await untilTurns(service, parent.id, 1);
  const kid = (await root.listThreads()).find((thread) => thread.name === 'kid')!;
  const { sent } = await fill(root, kid.id);
  await root.sendMessage({ recipient: parent.id, content: 'go', triggerTurn: true });
  expect((await untilTurns(service, parent.id, 2)).latestTurn?.result).toBe('asked');
  await root.interrupt(kid.id);
  expect((await untilTurns(service, kid.id, 2)).latestTurn?.result).toBe('kid read them');
  const { received } = await temporal.client.workflow.getHandle(kid.id).query(mailboxQuery);
  expect(received.at(-1)).toMatchObject({
    seq: sent + 1,
    sender: parent.id,
    content: 'take your mail',
    consumedInTurn: 2,
  });
}, 300_000);
