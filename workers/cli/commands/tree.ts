import { Command } from 'commander';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { formatTree } from '../format';
import { parseRootId, reopenRoot, withSession } from '../session';

/** `agents-kit tree <rootId>`: the run's thread tree (path, status, turns, latest result) or JSON. */
export function treeCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('tree')
      .description('print the thread tree of a root run: path, status, turns and latest result')
      .argument('<rootId>', 'the root thread id (thread_…)'),
  ).action(async (rootId: string, raw: unknown) => {
    const options = parseOptions(ConnectionOptions, raw, 'tree');
    const root = parseRootId(rootId);
    await withSession(configFrom(options), async (session) => {
      const service = await reopenRoot(session, root);
      const threads = await service.rootControls().listThreads();
      if (options.json) output.json({ rootThreadId: service.rootThreadId, threads });
      else formatTree(threads).forEach((line) => output.line(line));
    });
  });
}
