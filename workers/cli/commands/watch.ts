import { Command } from 'commander';
import { z } from 'zod';
import { ErrorKind, KitError } from '../../../domain/errors';
import { parseId } from '../../../domain/ids';
import { formatNotification } from '../format';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, intFlag, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, readerCapabilityOf, withSession } from '../session';
import { watchTree } from '../watch-tree';

const WatchOptions = ConnectionOptions.extend({
  limit: intFlag(1, Number.MAX_SAFE_INTEGER).optional(),
  idleExit: intFlag(1, 24 * 3_600_000).optional(),
  tree: z.boolean().default(false),
  yes: z.boolean().default(false),
});

/**
 * `agents-kit watch <conversationId>`: the exclusive receiver of a conversation (SPEC S5.3): prints each
 * notification as it arrives; receiving the next acknowledges the previous passive one; Ctrl-C releases
 * the lease without acknowledging the last item. A thread's conversation is read with its root's
 * capability in AGENTS_KIT_CAPABILITY (SPEC S3.9).
 */
export function watchCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('watch')
      .description("receive a conversation's notifications (takes its exclusive lease)")
      .argument('<conversationId>', 'the conversation id (conversation_…; with --tree: the root thread id)')
      .option('--limit <n>', 'stop after n notifications')
      .option('--idle-exit <ms>', 'stop when nothing arrives for this long')
      .option(
        '--tree',
        "a root run live: its conversation, approvals inline, and every agent's streamed output",
      )
      .option('--yes', 'with --tree: approve every interaction automatically'),
  ).action(async (conversationId: string, raw: unknown) => {
    const options = parseOptions(WatchOptions, raw, 'watch');
    if (options.tree) {
      const rootId = parseRootId(conversationId);
      await withSession(configFrom(options), (session) =>
        watchTree(session, output, rootId, {
          yes: options.yes,
          ...(options.idleExit === undefined ? {} : { idleExitMs: options.idleExit }),
        }),
      );
      return;
    }
    const id = parseId('conversation', conversationId, 'conversationId');
    await withSession(configFrom(options), async (session) => {
      const { ConversationNotificationReceiver } = await import('../../../client/conversation-receiver');
      const { checkConversationExists } = await import('../../../client/conversation-start');
      await checkConversationExists(session.client, id, 'watch');
      const capability = await readerCapabilityOf(session, id);
      await using receiver = await ConversationNotificationReceiver.open(session.client, id, {
        taskQueue: session.config.AGENTS_KIT_TASK_QUEUE,
        ...(capability ? { capability } : {}),
      }).catch((error: unknown) => {
        if (capability || !(error instanceof KitError && error.kind === ErrorKind.PermissionDenied))
          throw error;
        throw new KitError(
          ErrorKind.PermissionDenied,
          `${error.message}: set AGENTS_KIT_CAPABILITY to the root capability \`agents-kit run\` printed`,
        );
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
