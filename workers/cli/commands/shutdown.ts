import { Command } from 'commander';
import { formatReport } from '../format';
import { progressTicker, type CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

/** `agents-kit shutdown <rootId>`: closes admission, cancels the tree, waits, prints the report (SPEC S3.5). */
export function shutdownCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('shutdown')
      .description('shut a root run down: cancel every thread, wait for each, report (idempotent)')
      .argument('<rootId>', 'the root thread id (thread_…)'),
  ).action(async (rootId: string, raw: unknown) => {
    const options = parseOptions(ConnectionOptions, raw, 'shutdown');
    const root = parseRootId(rootId);
    await withSession(configFrom(options), async (session) => {
      const service = await reopenRoot(session, root);
      const stop = progressTicker(output, () => `the threads of ${service.rootThreadId} to end`);
      const report = await service.shutdown().finally(stop);
      if (options.json) output.json({ rootThreadId: service.rootThreadId, ...report });
      else formatReport(report).forEach((line) => output.line(line));
    });
  });
}
