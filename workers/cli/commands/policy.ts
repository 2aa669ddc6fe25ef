import { Command } from 'commander';
import { z } from 'zod';
import type { ApprovalPolicy, ApprovalPolicyChange } from '../../../domain/approval-policy';
import type { CliOutput } from '../io';
import { ConnectionOptions, configFrom, parseOptions, withConnectionOptions } from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

/** A comma-separated tool list (`''` for none); the names are checked by the policy's schema. */
const toolList = z
  .string()
  .transform((text) => (text.trim() === '' ? [] : text.split(',').map((name) => name.trim())));

const PolicyOptions = ConnectionOptions.extend({
  neverAsk: toolList.optional(),
  alwaysAsk: toolList.optional(),
  forget: z.boolean().optional(),
});

/**
 * `agents-kit policy <rootId> [--never-ask a,b] [--always-ask c] [--forget] [--json]`: prints the tree's
 * approval policy (SPEC S11.4), or changes it while the run is live — each list given replaces the
 * current one, `--forget` forgets every "always allow" answer — and prints the new one.
 */
export function policyCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('policy')
      .description("print or change a root run's approval policy (tools that never or always ask)")
      .argument('<rootId>', 'the root thread id (thread_…)')
      .option('--never-ask <tools>', "tools that run without approval, comma-separated ('' for none)")
      .option('--always-ask <tools>', "tools that always need approval, comma-separated ('' for none)")
      .option('--forget', 'forget every answer remembered for the run ("always allow")'),
  ).action(async (rootId: string, raw: unknown) => {
    const options = parseOptions(PolicyOptions, raw, 'policy');
    const root = parseRootId(rootId);
    const change: ApprovalPolicyChange = {
      ...(options.neverAsk ? { neverAsk: options.neverAsk } : {}),
      ...(options.alwaysAsk ? { alwaysAsk: options.alwaysAsk } : {}),
      ...(options.forget ? { remembered: [] } : {}),
    };
    await withSession(configFrom(options), async (session) => {
      const service = await reopenRoot(session, root);
      const policy =
        Object.keys(change).length > 0
          ? await service.setApprovalPolicy(change)
          : await service.approvalPolicy();
      if (options.json) output.json({ rootThreadId: service.rootThreadId, ...policy });
      else formatPolicy(service.rootThreadId, policy).forEach((line) => output.line(line));
    });
  });
}

const names = (tools: readonly string[]) => (tools.length > 0 ? tools.join(', ') : '(none)');

/** The policy as lines: its version, then each list. */
export function formatPolicy(rootId: string, policy: ApprovalPolicy): string[] {
  return [
    `approval policy of ${rootId} (version ${policy.version})`,
    `  never ask:   ${names(policy.neverAsk)}`,
    `  always ask:  ${names(policy.alwaysAsk)}`,
    `  remembered:  ${names(policy.remembered)}`,
  ];
}
