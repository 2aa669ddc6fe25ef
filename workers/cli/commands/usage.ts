import { Command } from 'commander';
import type { UsageReport } from '../../../client/usage';
import type { Usage } from '../../../domain/usage';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

/** `agents-kit usage <rootId>`: the tree's usage ledger (SPEC S11.3) per model and per thread, or JSON. */
export function usageCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('usage')
      .description('print what a root run used: input and output tokens and cost, per model and per thread')
      .argument('<rootId>', 'the root thread id (thread_…)'),
  ).action(async (rootId: string, raw: unknown) => {
    const options = parseOptions(ConnectionOptions, raw, 'usage');
    const root = parseRootId(rootId);
    await withSession(configFrom(options), async (session) => {
      const report = await (await reopenRoot(session, root)).usage();
      if (options.json) output.json(report);
      else formatUsage(report).forEach((line) => output.line(line));
    });
  });
}

const cell = (usage: Usage): string =>
  `${usage.inputTokens} in  ${usage.outputTokens} out  $${usage.costUsd.toFixed(6)}  ${usage.calls} calls`;

/** The report as lines: the tree's total and models, then each thread's total. */
export function formatUsage(report: UsageReport): string[] {
  const lines = [`tree ${report.rootId}: ${cell(report.tree.total)}`];
  const { tokens, usd } = report.budget;
  lines.push(
    `  budget: ${tokens.used} of ${tokens.limit} tokens${usd ? `  $${usd.used.toFixed(6)} of $${usd.limit}` : ''}`,
  );
  for (const [model, usage] of Object.entries(report.tree.byModel)) lines.push(`  ${model}: ${cell(usage)}`);
  for (const thread of report.threads) {
    lines.push(
      thread.unavailable
        ? `${thread.path} (${thread.status}): unavailable: ${thread.unavailable}`
        : `${thread.path} (${thread.status}): ${cell(thread.total)}`,
    );
  }
  return lines;
}
