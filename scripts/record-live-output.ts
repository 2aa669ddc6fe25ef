// The live-output scenario of scripts/record-histories.ts (`--live`, SPEC S10.1): a model thread whose
// calls stream to a watcher through its conversation, so the golden histories hold `live-output`
// signals and `watch-output` updates (added beside the v1 ones: live output only added handlers).
import type { Client } from '@temporalio/client';
import { createModelProvider, loadModelConfig } from '../activities';
import type { LiveOutputEvent } from '../client/live-output';
import { kitCall } from '../client/errors';
import { attachRecorder } from './record-attach';
import { liveOutputSignal, watchOutputUpdate } from '../domain/conversation-messages';
import { relatedId } from '../domain/ids';
import { eventually, kitErrorOf, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

/** The recorder's model: the scripted one, a word every 30 ms, so a call streams for a while. */
export const liveOutputModel = () =>
  createModelProvider(loadModelConfig({ AGENTS_KIT_SCRIPTED_WORD_DELAY_MS: '30' }));

/**
 * A root run (scripted root) with one model sub-agent whose two calls (its first turn and one a message
 * triggers) stream to a watcher that connects before the first; then a refused watch (no capability)
 * and a malformed `live-output` signal, which the conversation drops.
 */
export async function recordLiveOutput(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    root: {
      task: 'watch a model stream',
      name: 'root',
      kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'root ready' }]] },
    },
    grant: { idleTimeoutMs: 600_000, maxTotal: 4 },
  });
  const root = service.rootControls();
  // About 40 words: with the word delay, the answer (which quotes the task) streams for ~1.5 s.
  const task = Array.from({ length: 40 }, (_, n) => `word${n}`).join(' ');
  const thread = await root.spawn({ task, name: 'streamer', kernel: { type: 'model' }, tools: [] });
  const conversation = client.workflow.getHandle(relatedId('conversation', thread.id));
  await eventually(
    () => conversation.describe(),
    () => true,
    'the streamer’s conversation',
  );

  // Watching from before the call (the sink reads the watched memo when the call starts and every second).
  const events: LiveOutputEvent[] = [];
  const stop = new AbortController();
  const watching = (async () => {
    for await (const event of service.watchOutput(thread.id, { signal: stop.signal, pollWaitMs: 2_000 }))
      events.push(event);
  })();
  // Awaited once the watcher is stopped; a watch that fails before shows there.
  watching.catch(() => undefined);
  type End = Extract<LiveOutputEvent, { type: 'end' }>;
  const ends = async () => events.filter((event): event is End => event.type === 'end');
  await eventually(ends, (found) => found.length >= 1, 'the first call’s end', 60_000);
  await untilTurns(service, thread.id, 1);
  // Its answer quotes the message's envelope (200 characters, a few long words): it streams briefly.
  const message = Array.from({ length: 20 }, (_, n) => `more${n}`).join(' ');
  await root.sendMessage({ recipient: thread.id, content: message, triggerTurn: true });
  const both = await eventually(ends, (found) => found.length >= 2, 'the second call’s end', 60_000);
  await untilTurns(service, thread.id, 2);
  for (const end of both) log(`live output: turn ${end.call.turn} ${end.end}, ${end.length} chars`);
  if (both.some((end) => end.end !== 'finished') || both[0]?.call.turn === both[1]?.call.turn)
    throw new Error(`expected two finished calls, got ${JSON.stringify(both)}`);

  // A watch without a capability is refused; a malformed chunk is dropped (logged, nothing changes).
  const refused = await kitErrorOf(
    kitCall('watch without a capability', () =>
      conversation.executeUpdate(watchOutputUpdate, { args: [{}] }),
    ),
  );
  log(`watch without a capability: rejected as ${refused.kind}`);
  if (refused.kind !== 'PermissionDenied') throw refused;
  await conversation.signal(liveOutputSignal, null as never);

  stop.abort();
  await watching;
  // Settled once the watch that was waiting when the watcher stopped has answered (at its deadline).
  const unanswered = async () => {
    const history = (await conversation.fetchHistory()).events ?? [];
    const answered = new Set(
      history.map((event) => event.workflowExecutionUpdateCompletedEventAttributes?.meta?.updateId),
    );
    return history.filter((event) => {
      const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      return accepted?.input?.name === 'watch-output' && !answered.has(accepted.meta?.updateId);
    }).length;
  };
  await eventually(unanswered, (count) => count === 0, 'the last watch answered');
  log(`live output: ${events.length} events watched`);
}
