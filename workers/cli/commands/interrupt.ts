import { Command } from 'commander';
import { z } from 'zod';
import { ErrorKind, KitError } from '../../../domain/errors';
import { parseId } from '../../../domain/ids';
import { formatReceipt } from '../format';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

const InterruptOptions = ConnectionOptions.extend({ signal: z.boolean().default(false) });

/**
 * `agents-kit interrupt <rootId> <threadId>`: cancels the thread's running turn through the root
 * (SPEC S4.6) and prints the receipt; `--signal` sends the plain `interrupt` signal to the thread's own
 * workflow instead, as an operator would from the Web UI.
 */
export function interruptCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('interrupt')
      .description('interrupt the running turn of a thread (it stays alive and idle)')
      .argument('<rootId>', 'the root thread id (thread_…)')
      .argument('<threadId>', 'the thread to interrupt (thread_…)')
      .option('--signal', 'send the plain `interrupt` signal to the thread’s workflow (no receipt)'),
  ).action(async (rootId: string, threadId: string, raw: unknown) => {
    const options = parseOptions(InterruptOptions, raw, 'interrupt');
    const root = parseRootId(rootId);
    const id = parseId('thread', threadId, 'threadId');
    await withSession(configFrom(options), async (session) => {
      if (!options.signal) {
        const service = await reopenRoot(session, root);
        const receipt = await service.rootControls().interrupt(id);
        if (options.json) output.json(receipt);
        else output.line(formatReceipt(receipt));
        return;
      }
      // The plain signal needs no capability (SPEC S4.6), only a thread of this run: the thread's
      // workflow names its root in a search attribute.
      const { kitCall } = await import('../../../client/errors');
      const { interruptSignal } = await import('../../../domain/messages');
      const { searchAttributes } = await import('../../../domain/search-attributes');
      const handle = session.client.workflow.getHandle(id);
      const description = await kitCall('interrupt signal', () => handle.describe()).catch(() => undefined);
      if (description?.typedSearchAttributes.get(searchAttributes.rootThreadId) !== root) {
        throw new KitError(ErrorKind.NotFound, `thread ${id} is not part of root run ${root}`);
      }
      await kitCall('interrupt signal', () => handle.signal(interruptSignal));
      if (options.json) output.json({ thread: id, signalled: true });
      else output.line(`interrupt signal sent to ${id}`);
    });
  });
}
