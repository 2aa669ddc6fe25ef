import type { ThreadService } from '../../client/thread-service';
import type { TreeEvent } from '../../client/tree-stream';
import type { ThreadId } from '../../domain/ids';
import { answerInteraction, approvalPolicy, describeApprovals } from './approvals';
import type { CliOutput } from './io';
import { LivePrinter } from './live-printer';
import { reopenRoot, type CliSession } from './session';

/** One line for a tree event, after its agent's path; nothing for streamed output (printed as it comes). */
export function formatTreeEvent(item: TreeEvent, pathOf: (threadId: string) => string): string | undefined {
  const event = item.event;
  switch (event.type) {
    case 'notification': {
      const body = event.body;
      if (body.type === 'message') return `${item.path} says: ${body.text}`;
      if (body.type === 'status')
        return `${item.path} ${body.event}${body.detail ? ` (${body.detail})` : ''}`;
      return `${item.path} asks (${body.kind} ${body.requestId}): ${body.prompt}${body.tool ? ` [${body.tool.name} ${JSON.stringify(body.tool.input)}]` : ''}`;
    }
    case 'interaction-resolved': {
      const answer = event.resolution.answer;
      const said =
        answer.type === 'approval' ? (answer.approved ? 'approved' : 'denied') : `"${answer.text}"`;
      // SPEC S11.4: answered by nobody but the tree's approval policy, or remembered for the run.
      const how = event.resolution.byPolicy
        ? ` by the approval policy (${event.resolution.byPolicy})`
        : answer.type === 'approval' && answer.remember
          ? ', always for this run'
          : '';
      return `${item.path} ${event.resolution.requestId} ${said}${how}`;
    }
    case 'message-sent':
      return `${item.path} → ${pathOf(event.to)}: ${event.content}`;
    case 'message-received':
      return `${item.path} ← ${pathOf(event.from)} #${event.seq}: ${event.content}`;
    case 'output':
      return undefined;
  }
}

/**
 * `agents-kit watch --tree <rootId>`: a root run live (SPEC S8.2, S10.2): the tree stream, each event on
 * a line after its agent's path (spawns, turns, messages between agents, interactions and their answers,
 * ends), approvals answered inline (asked at a terminal, `--yes`, or left for `resolve`), and each
 * agent's model output printed as it streams (S10.1). From the run's start (or after a cursor); until
 * Ctrl-C, or `idleExitMs` without an event.
 */
export async function watchTree(
  session: CliSession,
  output: CliOutput,
  rootId: ThreadId,
  options: { yes: boolean; idleExitMs?: number; after?: string },
): Promise<void> {
  const service = await reopenRoot(session, rootId);
  const policy = approvalPolicy(options.yes);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const write = output.write?.bind(output) ?? (() => undefined);
  const printer = new LivePrinter(service, { write, note: (line) => output.line(line) }, stop.signal);
  printer.line(describeApprovals(policy));
  const paths = new Map<string, string>();
  const pathOf = (threadId: string) => paths.get(threadId) ?? threadId;
  let idle: NodeJS.Timeout | undefined;
  const awake = () => {
    clearTimeout(idle);
    if (options.idleExitMs !== undefined) idle = setTimeout(() => stop.abort(), options.idleExitMs);
  };
  awake();
  try {
    for await (const item of service.streamTree({
      signal: stop.signal,
      rootPath: (await service.refreshRoot()).path,
      ...(options.after ? { after: options.after } : {}),
    })) {
      awake();
      paths.set(item.threadId, item.path);
      printer.follow(item.threadId, item.path);
      const line = formatTreeEvent(item, pathOf);
      if (line) printer.line(line);
      if (item.event.type === 'notification' && item.event.body.type === 'interaction')
        // Read from the run's start, an interaction may have been answered already: its answer is
        // then the one that stands, and the refusal is said, not fatal.
        await answerInteraction({
          client: session.client,
          item: item.event,
          policy,
          say: (said) => printer.line(said),
          capability: service.rootCapability,
          runKey: service.capability,
        }).catch((error: unknown) =>
          printer.line(`not answered: ${error instanceof Error ? error.message : String(error)}`),
        );
    }
  } finally {
    stop.abort();
    clearTimeout(idle);
    await printer.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * For `run`, beside the root conversation it receives (its statuses, its messages, and every approval of
 * the tree, mirrored there and answered there): the rest of the tree stream — every other thread's
 * statuses and messages for people, and the messages agents send each other — after each agent's path;
 * every thread it names is followed for its streamed output.
 */
export async function printTreeBeside(
  service: ThreadService,
  printer: LivePrinter,
  signal: AbortSignal,
): Promise<void> {
  const paths = new Map<string, string>();
  for await (const item of service.streamTree({ signal })) {
    paths.set(item.threadId, item.path);
    printer.follow(item.threadId, item.path);
    const event = item.event;
    const atRoot =
      event.type === 'interaction-resolved' ||
      (event.type === 'notification' &&
        (item.threadId === service.rootThreadId || event.body.type === 'interaction'));
    const line = atRoot ? undefined : formatTreeEvent(item, (threadId) => paths.get(threadId) ?? threadId);
    if (line) printer.line(line);
  }
}
