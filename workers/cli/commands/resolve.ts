import { Command } from 'commander';
import { z } from 'zod';
import { KitError } from '../../../domain/errors';
import { parseId } from '../../../domain/ids';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { rootCapabilityOf, withSession } from '../session';

const ResolveOptions = ConnectionOptions.extend({
  approve: z.boolean().optional(),
  deny: z.boolean().optional(),
  reason: z.string().optional(),
  answer: z.string().optional(),
  remember: z.boolean().optional(),
});

/**
 * `agents-kit resolve <threadId> <requestId> --approve [--remember]|--deny [--reason] | --answer <text>`:
 * answers an interaction at the thread that asked (SPEC S3.1, S5.4) with the root capability in
 * AGENTS_KIT_CAPABILITY; idempotent for the same answer. `--remember` allows the tool for the rest of
 * the run, in the whole tree (SPEC S11.4).
 */
export function resolveCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('resolve')
      .description('answer an approval request or a question')
      .argument('<threadId>', 'the thread that asked (thread_…)')
      .argument('<requestId>', 'the interaction request id (request_…)')
      .option('--approve', 'approve the request')
      .option('--deny', 'deny the request')
      .option('--reason <text>', 'why (with --approve or --deny)')
      .option('--answer <text>', 'the answer to a question')
      .option(
        '--remember',
        'with --approve: always allow this tool for the rest of the run (the whole tree)',
      ),
  ).action(async (threadId: string, requestId: string, raw: unknown) => {
    const options = parseOptions(ResolveOptions, raw, 'resolve');
    const target = {
      threadId: parseId('thread', threadId, 'threadId'),
      requestId: parseId('request', requestId, 'requestId'),
    };
    const chosen = [options.approve, options.deny, options.answer !== undefined].filter(Boolean).length;
    if (chosen !== 1)
      throw KitError.protocol('resolve: give exactly one of --approve, --deny or --answer <text>', {
        fields: ['answer'],
      });
    if (options.remember && !options.approve)
      throw KitError.protocol('resolve: --remember goes with --approve (only an approval is remembered)', {
        fields: ['remember'],
      });
    const answer =
      options.answer !== undefined
        ? { type: 'question' as const, text: options.answer }
        : {
            type: 'approval' as const,
            approved: options.approve === true,
            ...(options.reason ? { reason: options.reason } : {}),
            ...(options.remember ? { remember: true as const } : {}),
          };
    await withSession(configFrom(options), async (session) => {
      const { resolveNotification } = await import('../../../client/conversations');
      const { rootCapability } = await import('../../../domain/capability');
      const { threadQuery } = await import('../../../domain/messages');
      const { kitCall } = await import('../../../client/errors');
      // The root's capability answers for any thread of its tree (SPEC S5.9); the thread names its root.
      const thread = await kitCall('resolve', () =>
        session.client.workflow.getHandle(target.threadId).query(threadQuery),
      );
      const capability = rootCapability(rootCapabilityOf(session, thread.rootId), thread.rootId);
      const resolution = await resolveNotification(session.client, target, answer, {
        capability,
        name: 'agents-kit CLI',
      });
      if (options.json) output.json(resolution);
      else output.line(`resolved ${resolution.requestId}: ${JSON.stringify(resolution.answer)}`);
    });
  });
}
