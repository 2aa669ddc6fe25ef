import { Command } from 'commander';
import { ConversationNotificationReceiver } from '../../../client/conversation-receiver';
import { parseId } from '../../../domain/ids';
import type { ConversationNotification } from '../../../domain/schemas';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, intFlag, parseOptions, withConnectionOptions } from '../options';
import { withSession } from '../session';

const WatchOptions = ConnectionOptions.extend({
  limit: intFlag(1, Number.MAX_SAFE_INTEGER).optional(),
  idleExit: intFlag(1, 24 * 3_600_000).optional(),
});

/** One line per notification: seq, kind and what it says (interactions show the request id to resolve). */
export function formatNotification(item: ConversationNotification): string {
  const body = item.body;
  switch (body.type) {
    case 'message':
      return `#${item.seq} message: ${body.text}`;
    case 'status':
      return `#${item.seq} status ${body.event} ${body.threadId}${body.detail ? ` (${body.detail})` : ''}`;
    case 'interaction':
      return `#${item.seq} ${body.kind} ${body.requestId} from ${body.threadId}: ${body.prompt}${body.tool ? ` [${body.tool.name} ${JSON.stringify(body.tool.input)}]` : ''}`;
  }
}

/**
 * `agents-kit watch <conversationId>`: the exclusive receiver of a conversation (SPEC S5.3): prints each
 * notification as it arrives; receiving the next acknowledges the previous passive one; Ctrl-C releases
 * the lease without acknowledging the last item.
 */
export function watchCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('watch')
      .description("receive a conversation's notifications (takes its exclusive lease)")
      .argument('<conversationId>', 'the conversation id (conversation_…, same hex as its thread)')
      .option('--limit <n>', 'stop after n notifications')
      .option('--idle-exit <ms>', 'stop when nothing arrives for this long'),
  ).action(async (conversationId: string, raw: unknown) => {
    const options = parseOptions(WatchOptions, raw, 'watch');
    const id = parseId('conversation', conversationId, 'conversationId');
    await withSession(configFrom(options), async (session) => {
      await using receiver = await ConversationNotificationReceiver.open(session.client, id, {
        taskQueue: session.config.AGENTS_KIT_TASK_QUEUE,
      });
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        for (let received = 0; options.limit === undefined || received < options.limit; received++) {
          const signal = options.idleExit
            ? AbortSignal.any([stop.signal, AbortSignal.timeout(options.idleExit)])
            : stop.signal;
          const item = await receiver.recv({ signal }).catch((error: unknown) => {
            if (signal.aborted) return null;
            throw error;
          });
          if (!item) break;
          if (options.json) output.line(JSON.stringify(item));
          else output.line(formatNotification(item));
        }
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
  });
}
