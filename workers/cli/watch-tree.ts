import type { ThreadId } from '../../domain/ids';
import { approvalPolicy, describeApprovals, streamConversation } from './approvals';
import type { CliOutput } from './io';
import { LivePrinter } from './live-printer';
import { reopenRoot, type CliSession } from './session';

/**
 * `agents-kit watch --tree <rootId>`: a root run live (SPEC S8.2, S10.1). The root conversation's items
 * (every status, message and approval of the tree, approvals asked at a terminal or left for `resolve`)
 * and every agent's model output as it streams, after the agent's path. Threads are found from the
 * tree listing (every `listEveryMs`), at any depth. Until Ctrl-C, or `idleExitMs` without a new item.
 *
 * The tree's live output comes from one watcher per thread; the causally ordered tree stream of SPEC
 * S10.2 (one subscription, resumable from a cursor) is not built yet.
 */
export async function watchTree(
  session: CliSession,
  output: CliOutput,
  rootId: ThreadId,
  options: { yes: boolean; idleExitMs?: number; listEveryMs?: number },
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
  let lastItemAt = Date.now();
  const idle = setInterval(() => {
    if (options.idleExitMs !== undefined && Date.now() - lastItemAt >= options.idleExitMs) stop.abort();
  }, 200);
  const listing = (async () => {
    while (!stop.signal.aborted) {
      const threads = await service
        .rootControls()
        .listThreads()
        .catch(() => []);
      for (const thread of threads) printer.follow(thread.id, thread.path);
      await new Promise((done) => setTimeout(done, options.listEveryMs ?? 2_000).unref());
    }
  })();
  try {
    await streamConversation({
      client: session.client,
      conversationId: (await service.refreshRoot()).conversationId,
      taskQueue: session.config.AGENTS_KIT_TASK_QUEUE,
      policy,
      capability: service.rootCapability,
      runKey: service.capability,
      say: (line) => printer.line(line),
      signal: stop.signal,
      onHandled: (item) => {
        lastItemAt = Date.now();
        printer.noticed(item);
      },
    });
  } finally {
    stop.abort();
    clearInterval(idle);
    await listing;
    await printer.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
