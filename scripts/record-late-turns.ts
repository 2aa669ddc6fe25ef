// Scenarios of scripts/record-histories.ts about a thread's later turns and end: `--asked-turns`
// (patch `rootWaitCountsAskedTurns`: the root kernel waits on a thread right after its triggering
// message), `--watch-ended` (patch `watchEndsWithThread`: a watch of live output once the thread has
// ended, which answers at once) and `--watch-woken` (patch `watchWakesAtThreadEnd`: a watch waiting
// when the thread ends, which answers then).
import type { Client } from '@temporalio/client';
import { conversationSummary } from '../client/conversations';
import { relatedId } from '../domain/ids';
import { attachRecorder } from './record-attach';
import { eventually, untilTurns } from '../test/helpers/runs';

/** A sub-agent that answers each turn with the messages it took. */
const echo = {
  name: 'echo',
  task: 'repeat what you are told',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'heard: {{inbox}}' }]] },
};

export async function recordRootWaitCountsAskedTurns(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'send, then wait',
      name: 'root',
      kernel: {
        type: 'scripted',
        turns: [
          [
            { type: 'spawn', as: 'echo', request: echo },
            { type: 'wait', on: ['echo'], timeoutMs: 60_000 },
            { type: 'send', to: 'echo', content: 'again', triggerTurn: true },
            { type: 'wait', on: ['echo'], timeoutMs: 60_000 },
            { type: 'reply', text: 'saw {{last}}' },
          ],
        ],
      },
    },
  });
  await untilTurns(service, service.rootThreadId, 1);
  await service.shutdown();
}

export async function recordWatchEndsWithThread(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue);
  const thread = await service.rootControls().spawn(echo);
  await untilTurns(service, thread.id, 1);
  await service.rootControls().close(thread.id);
  await eventually(
    () => conversationSummary(client, relatedId('conversation', thread.id)),
    (summary) => summary.closed,
    'the thread’s end to reach its conversation',
  );
  for await (const _ of service.watchOutput(thread.id)) break;
  await service.shutdown();
}

export async function recordWatchWakesAtThreadEnd(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue);
  const thread = await service.rootControls().spawn(echo);
  await untilTurns(service, thread.id, 1);
  const conversation = client.workflow.getHandle(relatedId('conversation', thread.id));
  const watching = (async () => {
    for await (const _ of service.watchOutput(thread.id, { pollWaitMs: 30_000 }));
  })();
  await eventually(
    async () => JSON.stringify((await conversation.fetchHistory()).events),
    (events) => events.includes('watch-output'),
    'the watch to wait',
  );
  await service.rootControls().close(thread.id);
  await watching;
  await service.shutdown();
}
