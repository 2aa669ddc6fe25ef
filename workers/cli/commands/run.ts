import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ErrorKind, isErrorKind, KitError, parseInput } from '../../../domain/errors';
import { parseId } from '../../../domain/ids';
import { KernelSpec, maxBudgetUsd, type AgentSpec } from '../../../domain/schemas';
import { approvalPolicy, describeApprovals, streamConversation } from '../approvals';
import { formatMessage, formatReport, formatTree, latestResult } from '../format';
import type { CliOutput } from '../io';
import {
  ConnectionOptions,
  configFrom,
  intFlag,
  parseJsonFlag,
  parseOptions,
  withConnectionOptions,
} from '../options';
import { untilSettled, type StreamProgress } from '../run-settle';
import { LivePrinter } from '../live-printer';
import { printTreeBeside } from '../watch-tree';
import { scriptedTeam } from '../scripted-team';
import { withSession } from '../session';

const agentName = /^[a-z0-9][a-z0-9_-]{0,39}$/;

const RunOptions = ConnectionOptions.extend({
  rootId: z.string().optional(),
  owner: z.string().min(1).max(200).default('cli'),
  agents: z
    .string()
    .default('researcher,writer')
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(z.string().regex(agentName, 'expected names of a-z, 0-9, _ and -, comma-separated')).max(100),
    ),
  script: z.string().min(1).optional(),
  maxDepth: intFlag(0, 64).optional(),
  maxConcurrent: intFlag(1, 10_000).optional(),
  maxTotal: intFlag(1, 1_000_000).optional(),
  budget: intFlag(0, Number.MAX_SAFE_INTEGER).optional(),
  budgetUsd: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'expected an amount in US dollars, e.g. 2.50')
    .transform(Number)
    .pipe(z.number().max(maxBudgetUsd, `must be ≤ ${maxBudgetUsd}`))
    .optional(),
  idleTimeout: intFlag(1, 30 * 24 * 3_600_000).optional(),
  timeout: intFlag(1, 24 * 3_600_000).default(300_000),
  keep: z.boolean().default(false),
  model: z.boolean().default(false),
  yes: z.boolean().default(false),
});
type RunOptions = z.infer<typeof RunOptions>;

function rootSpec(task: string, options: RunOptions): AgentSpec {
  if (options.model) return { name: 'root', task, kernel: { type: 'model', maxSteps: 24 } };
  if (!options.script) return scriptedTeam(task, options.agents);
  let text: string;
  try {
    text = readFileSync(options.script, 'utf8');
  } catch {
    throw KitError.protocol(`--script: cannot read ${options.script}`, { fields: ['--script'] });
  }
  return { name: 'root', task, kernel: parseInput(KernelSpec, parseJsonFlag(text, '--script'), '--script') };
}

/**
 * `agents-kit run <task>`: attaches a root run (scripted model unless one is configured), streams the
 * root conversation, the rest of the tree stream, every agent's streamed output and the tree's progress
 * to stderr until the root's first turn has ended and the whole tree is idle with no approval pending,
 * prints the tree and the root's answer, then completes the run (or leaves it running with `--keep`).
 * Ctrl-C shuts the run down.
 */
export function runCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('run')
      .description('attach a root run for a task, stream its progress, print the tree and results')
      .argument('<task>', 'what the root agent should do')
      .option('--root-id <threadId>', 'the root thread id (default: a new one)')
      .option('--owner <name>', 'who owns the run’s grant', 'cli')
      .option(
        '--agents <names>',
        'sub-agents the scripted root spawns, comma-separated ("" for none)',
        'researcher,writer',
      )
      .option(
        '--script <file>',
        'a JSON scripted-kernel spec for the root ({"type":"scripted","turns":[[…]]})',
      )
      .option('--max-depth <n>', 'grant: deepest sub-agent level')
      .option('--max-concurrent <n>', 'grant: live threads at once')
      .option('--max-total <n>', 'grant: lifetime spawns')
      .option('--budget <tokens>', 'grant: token budget')
      .option('--budget-usd <dollars>', 'grant: budget in US dollars at the worker’s AGENTS_KIT_MODEL_PRICES')
      .option('--idle-timeout <ms>', 'grant: how long an idle sub-agent lives')
      .option(
        '--timeout <ms>',
        'how long to wait for the root’s first turn and the whole tree to be idle (approvals included)',
        '300000',
      )
      .option('--keep', 'leave the run running afterwards (default: complete it)')
      .option(
        '--model',
        "the root runs the model loop on the worker's configured provider (scripted model by default)",
      )
      .option(
        '--yes',
        'approve every interaction automatically (otherwise asked at a terminal, or left for `resolve`)',
      ),
  ).action(async (task: string, raw: unknown) => {
    const options = parseOptions(RunOptions, raw, 'run');
    const rootThreadId = options.rootId ? parseId('thread', options.rootId, 'rootId') : undefined;
    const root = rootSpec(task, options);
    const config = configFrom(options);
    const policy = approvalPolicy(options.yes);
    await withSession(config, async (session) => {
      const { ThreadService } = await import('../../../client/thread-service');
      const { conversationSummary } = await import('../../../client/conversations');
      const { untilRootTaken } = await import('../worker-presence');
      const service = await ThreadService.attach(session.client, {
        taskQueue: config.AGENTS_KIT_TASK_QUEUE,
        owner: options.owner,
        root,
        ...(rootThreadId ? { rootThreadId } : {}),
        grant: {
          owner: options.owner,
          ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
          ...(options.maxConcurrent !== undefined ? { maxConcurrent: options.maxConcurrent } : {}),
          ...(options.maxTotal !== undefined ? { maxTotal: options.maxTotal } : {}),
          ...(options.budget !== undefined ? { budgetTokens: options.budget } : {}),
          ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
          ...(options.idleTimeout !== undefined ? { idleTimeoutMs: options.idleTimeout } : {}),
        },
      });
      await untilRootTaken(session.client, service.handle, config.AGENTS_KIT_TASK_QUEUE);
      output.note(
        options.model
          ? "model: the worker's configured provider (AGENTS_KIT_MODEL_PROVIDER; the scripted model when unset)"
          : 'model: scripted (deterministic script, no model provider configured)',
      );
      output.note(`root run ${service.rootThreadId} attached on task queue ${config.AGENTS_KIT_TASK_QUEUE}`);
      output.note(describeApprovals(policy));
      let interrupted = false;
      const onSignal = () => {
        interrupted = true;
        output.note(
          options.keep ? 'stopping (the run keeps running: --keep)…' : 'stopping: shutting the run down…',
        );
      };
      process.on('SIGINT', onSignal);
      // The root conversation is streamed meanwhile: statuses, messages, and every approval of the tree.
      const conversationId = (await service.refreshRoot()).conversationId;
      const progress: StreamProgress = { handledThrough: 0, ended: false };
      const stopStreaming = new AbortController();
      // SPEC S10.1: each agent's text as its model writes it, between the conversation's lines.
      const write = output.write?.bind(output);
      const printer =
        write && !options.json
          ? new LivePrinter(service, { write, note: (line) => output.note(line) }, stopStreaming.signal)
          : undefined;
      printer?.follow(service.rootThreadId, '/root');
      // SPEC S10.2: the rest of the tree as it happens, after each agent's path.
      const treeLines =
        printer &&
        printTreeBeside(service, printer, stopStreaming.signal).catch((error: unknown) =>
          output.note(`tree stream stopped: ${error instanceof Error ? error.message : String(error)}`),
        );
      const streaming = streamConversation({
        capability: service.rootCapability,
        runKey: service.capability,
        client: session.client,
        conversationId,
        taskQueue: config.AGENTS_KIT_TASK_QUEUE,
        policy,
        say: (line) => (printer ? printer.line(line) : output.note(line)),
        signal: stopStreaming.signal,
        onHandled: (item) => {
          progress.handledThrough = item.seq;
          printer?.noticed(item);
        },
      })
        .catch((error: unknown) =>
          output.note(
            `conversation stream stopped: ${error instanceof Error ? error.message : String(error)}`,
          ),
        )
        .finally(() => (progress.ended = true));
      // Stops the stream and releases the conversation's lease (S5.5), so a later `watch` can take it.
      const stopStream = async () => {
        stopStreaming.abort();
        await streaming;
        await treeLines;
        await printer?.stop();
      };
      try {
        const settled = await untilSettled({
          // Progress lines end an agent's streamed line first.
          output: printer ? { ...output, note: (line) => printer.line(line) } : output,
          // Every thread of the tree, at any depth, is followed as the listing finds it.
          onThreads: (threads) => threads.forEach((thread) => printer?.follow(thread.id, thread.path)),
          service,
          conversation: () => conversationSummary(session.client, conversationId),
          stream: progress,
          taskQueue: config.AGENTS_KIT_TASK_QUEUE,
          timeoutMs: options.timeout,
          stopped: () => interrupted,
        });
        await stopStream();
        const { root: rootThread, threads } = settled;
        const messages = await service.takeRootMessages();
        const report = options.keep ? undefined : await service.complete();
        if (options.json) {
          output.json({
            rootThreadId: service.rootThreadId,
            // A run left running is acted on later with its capability (AGENTS_KIT_CAPABILITY).
            ...(options.keep ? { capability: service.capability } : {}),
            taskQueue: config.AGENTS_KIT_TASK_QUEUE,
            root: rootThread,
            threads,
            messages,
            report: report ?? null,
          });
        } else {
          formatTree(threads).forEach((line) => output.line(line));
          messages.forEach((message) => output.line(`message to root: ${formatMessage(message)}`));
          output.line(`root: ${latestResult(rootThread) || rootThread.status}`);
        }
        if (report) output.note(`run completed: ${formatReport(report).slice(0, 3).join(', ')}`);
        else
          output.note(
            `left running: AGENTS_KIT_CAPABILITY=${service.capability} agents-kit shutdown ${service.rootThreadId} ends it (the capability is the run's secret)`,
          );
        const first = rootThread.firstTurn;
        if (first?.status === 'failed') {
          throw new KitError(
            isErrorKind(first.error?.kind) ? first.error.kind : ErrorKind.InvalidState,
            `the root's first turn failed: ${first.error?.message ?? 'no message'}`,
          );
        }
      } catch (error) {
        if (interrupted && !options.keep) {
          const report = await service.shutdown();
          output.note(`run shut down: ${formatReport(report).slice(0, 3).join(', ')}`);
        }
        throw error;
      } finally {
        await stopStream();
        process.removeListener('SIGINT', onSignal);
      }
    });
  });
}
