import type { AgentInterruptReceipt, ReconcileResult, ShutdownReport } from '../../domain/control';
import type { AgentThread, ConversationNotification, InterAgentMessage } from '../../domain/schemas';

const oneLine = (text: string, max = 100) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A thread's latest turn in a few words: its result, error or interruption. */
export function latestResult(thread: AgentThread): string {
  const turn = thread.latestTurn;
  if (!turn) return '';
  if (turn.status === 'failed')
    return `failed: ${turn.error?.kind ?? 'Error'}: ${oneLine(turn.error?.message ?? '')}`;
  if (turn.status === 'interrupted') return 'interrupted';
  return oneLine(turn.result ?? '');
}

/**
 * The thread tree as aligned text lines: path (indented by depth), status, turns completed/started, id
 * and latest result. Children follow their parent, in spawn order.
 */
export function formatTree(threads: readonly AgentThread[]): string[] {
  const byParent = new Map<string | null, AgentThread[]>();
  for (const thread of threads) {
    const siblings = byParent.get(thread.parentId) ?? [];
    siblings.push(thread);
    byParent.set(thread.parentId, siblings);
  }
  const known = new Set(threads.map((thread) => thread.id));
  const tops = threads.filter((thread) => thread.parentId === null || !known.has(thread.parentId));
  const ordered: AgentThread[] = [];
  const visit = (thread: AgentThread) => {
    ordered.push(thread);
    for (const child of byParent.get(thread.id) ?? []) visit(child);
  };
  tops.forEach(visit);
  const rows = ordered.map((thread) => [
    `${'  '.repeat(thread.depth)}${thread.path}`,
    thread.status,
    `turns ${thread.turnsCompleted}/${thread.turnsStarted}`,
    thread.id,
    latestResult(thread),
  ]);
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column < 4 ? cell.padEnd(widths[column]!) : cell))
      .join('  ')
      .trimEnd(),
  );
}

/** A shutdown/complete report: how many threads ended which way, and which. */
export function formatReport(report: ShutdownReport): string[] {
  const list = (ids: readonly string[]) => (ids.length > 0 ? `: ${ids.join(', ')}` : '');
  return [
    `cancelled ${report.cancelled.length}${list(report.cancelled)}`,
    `failed ${report.failed.length}${list(report.failed)}`,
    `unconfirmed ${report.unconfirmed.length}${list(report.unconfirmed)}`,
    `completed at ${report.completedAt}`,
  ];
}

/** An interrupt receipt (SPEC S4.6). */
export function formatReceipt(receipt: AgentInterruptReceipt): string {
  return receipt.cancellationRequested
    ? `interrupt requested for ${receipt.thread} (turn ${receipt.interruptedTurn ?? '?'} cancelled)`
    : `${receipt.thread} had no running turn: nothing to interrupt`;
}

/** A reconcile answer (SPEC S3.6). */
export function formatReconcile(result: ReconcileResult): string {
  return result.status === 'uncertain'
    ? `uncertain (${result.reason}): the spawn cannot be confirmed; its quota stays consumed`
    : `${result.status}: ${result.thread.path} ${result.thread.id} [${result.thread.status}]`;
}

/** A delivered inter-agent message. */
export function formatMessage(message: InterAgentMessage): string {
  return `${message.id} #${message.seq} ${message.sender} → ${message.recipient}: ${oneLine(message.content)}`;
}

/** One line per notification: seq, kind and what it says (interactions show the request id to resolve). */
export function formatNotification(item: ConversationNotification): string {
  const body = item.body;
  switch (body.type) {
    case 'message':
      return `#${item.seq} message: ${body.text}`;
    case 'status':
      return `#${item.seq} status ${body.event} ${body.threadId}${body.detail ? ` (${body.detail})` : ''}`;
    case 'interaction':
      return `#${item.seq} ${body.kind} ${body.requestId} from ${body.threadId}: ${body.prompt}${body.tool ? ` [${body.tool.name} ${JSON.stringify(body.tool.input)}]` : ''}`;
  }
}
