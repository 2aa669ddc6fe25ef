import { Command } from 'commander';
import { z } from 'zod';
import { parseId } from '../../../domain/ids';
import { formatMessage } from '../format';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

const SendOptions = ConnectionOptions.extend({ trigger: z.boolean().default(false) });

/** `agents-kit send <rootId> <threadId> <text>`: a message from the root to one of its threads (SPEC S4.3). */
export function sendCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('send')
      .description('send a message to a thread of the run, as the root')
      .argument('<rootId>', 'the root thread id (thread_…)')
      .argument('<threadId>', 'the recipient thread id (thread_…)')
      .argument('<text>', 'the message')
      .option(
        '--trigger',
        'start a turn on the recipient if it is idle (otherwise it waits for the next turn)',
      ),
  ).action(async (rootId: string, threadId: string, text: string, raw: unknown) => {
    const options = parseOptions(SendOptions, raw, 'send');
    const root = parseRootId(rootId);
    const recipient = parseId('thread', threadId, 'threadId');
    await withSession(configFrom(options), async (session) => {
      const service = await reopenRoot(session, root);
      const message = await service
        .rootControls()
        .sendMessage({ recipient, content: text, triggerTurn: options.trigger });
      if (options.json) output.json(message);
      else output.line(formatMessage(message));
    });
  });
}
