// The scenario of scripts/record-histories.ts `--trigger-room` (patch `triggerTurnRoom`): a busy kid's
// mailbox is filled with messages that ask for no turn, then its parent's control request with
// `triggerTurn` takes the room a full mailbox keeps for it, and the kid's next turn takes them all.
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import { KitError } from '../domain/errors';
import { untilTurns } from '../test/helpers/runs';

export async function recordTriggerTurnRoom(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue);
  const root = service.rootControls();
  const kid = {
    task: 'read mail',
    name: 'kid',
    kernel: {
      type: 'scripted' as const,
      turns: [
        [{ type: 'tool' as const, tool: 'sleep', input: { ms: 3_600_000 } }],
        [{ type: 'reply' as const, text: 'read them' }],
      ],
    },
  };
  const parent = await root.spawn({
    task: 'look after a kid',
    name: 'parent',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'spawn', as: 'kid', request: kid },
          { type: 'reply', text: 'spawned' },
        ],
        [{ type: 'send', to: 'kid', content: 'take your mail', triggerTurn: true }],
      ],
    },
  });
  await untilTurns(service, parent.id, 1);
  const kidId = (await root.listThreads()).find((thread) => thread.name === 'kid')!.id;
  for (const content of ['long message '.repeat(7_690), 'x']) {
    for (;;) {
      const refusal = await root.sendMessage({ recipient: kidId, content }).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (KitError.is(refusal) && refusal.kind === 'QuotaExceeded') break;
      if (refusal !== undefined) throw refusal;
    }
  }
  await root.sendMessage({ recipient: parent.id, content: 'go', triggerTurn: true });
  await untilTurns(service, parent.id, 2);
  await root.interrupt(kidId);
  await untilTurns(service, kidId, 2);
  await service.shutdown();
}
