// The durability checker (SPEC S7.1, S7.2): reads the record of every client operation and observation
// of a run that was crashed and restarted, and lists every broken promise. Pure: no server, no clock.
import type { ShutdownReport } from '../../domain/control';
import type { RunSnapshot } from '../../domain/run-state';
import { isTerminal, type InterAgentMessage } from '../../domain/schemas';

/** A delivered message as a mailbox shows it. */
export interface ObservedMessage {
  id: string;
  seq: number;
  sender: string;
  content: string;
}

/** One line of the operation log: what a client did (with its answer) or what it observed. */
export type LogEntry =
  | { type: 'spawn'; requestId?: string; threadId?: string; error?: string }
  | { type: 'send'; recipient: string; content: string; message?: InterAgentMessage; error?: string }
  | { type: 'root-messages'; messages: InterAgentMessage[] }
  | { type: 'mailbox'; threadId: string; received: ObservedMessage[] }
  | { type: 'receiver-open'; session: number }
  | {
      type: 'recv';
      session: number;
      seq: number;
      id: string;
      kind: 'message' | 'status' | 'interaction';
      requestId?: string;
    }
  | { type: 'receiver-close'; session: number }
  | { type: 'resolved'; requestId: string }
  | { type: 'snapshot'; snapshot: RunSnapshot }
  | { type: 'shutdown'; report: ShutdownReport }
  | { type: 'fault'; what: string; at: number };

/** Every rule the log breaks, each as a sentence; empty when the run kept all its promises. */
export function checkRun(log: readonly LogEntry[]): string[] {
  return [...checkMessages(log), ...checkCounters(log), ...checkNotifications(log), ...checkShutdown(log)];
}

/** S4.3: every message delivered exactly once, in per-recipient sequence order; acknowledged sends all arrive. */
export function checkMessages(log: readonly LogEntry[]): string[] {
  const problems: string[] = [];
  const delivered = new Map<string, ObservedMessage[]>();
  for (const entry of log) {
    if (entry.type === 'mailbox') delivered.set(entry.threadId, entry.received);
  }
  const rootTakes = log.flatMap((entry) => (entry.type === 'root-messages' ? entry.messages : []));
  if (rootTakes.length > 0) delivered.set(rootTakes[0]!.recipient, [...rootTakes]);
  for (const [recipient, received] of delivered) {
    received.forEach((message, index) => {
      if (message.seq !== index + 1)
        problems.push(
          `${recipient}: delivery ${index + 1} has seq ${message.seq} (lost, repeated or reordered)`,
        );
    });
    const ids = received.map((message) => message.id);
    for (const id of new Set(ids)) {
      const copies = ids.filter((other) => other === id).length;
      if (copies > 1) problems.push(`${recipient}: message ${id} delivered ${copies} times`);
    }
  }
  for (const entry of log) {
    if (entry.type !== 'send' || !entry.message) continue;
    const received = delivered.get(entry.recipient);
    if (!received) {
      problems.push(`no mailbox observed for ${entry.recipient}, recipient of ${entry.message.id}`);
      continue;
    }
    const found = received.filter((message) => message.id === entry.message!.id);
    if (found.length === 0)
      problems.push(`acknowledged message ${entry.message.id} to ${entry.recipient} was lost`);
    else if (found[0]!.seq !== entry.message.seq || found[0]!.content !== entry.content)
      problems.push(
        `message ${entry.message.id} arrived as seq ${found[0]!.seq}, acknowledged as ${entry.message.seq}`,
      );
  }
  return problems;
}

/** S3.1/S4.1: admission counters equal what the registry holds; each acknowledged spawn admitted once. */
export function checkCounters(log: readonly LogEntry[]): string[] {
  const snapshots = log.flatMap((entry) => (entry.type === 'snapshot' ? [entry.snapshot] : []));
  if (snapshots.length === 0) return ['no run-state snapshot was observed'];
  const problems: string[] = [];
  for (const snapshot of snapshots) {
    const byId = new Map<string, (typeof snapshot.records)[number]>(
      snapshot.records.map((record) => [record.thread.id, record]),
    );
    const ancestorsOf = (id: string): string[] => {
      const chain: string[] = [];
      for (let parent = byId.get(id)?.thread.parentId; parent; parent = byId.get(parent)?.thread.parentId)
        chain.push(parent);
      return chain;
    };
    const expected = new Map<string, { live: number; total: number }>(
      snapshot.records.map((record) => [record.thread.id, { live: 0, total: 0 }]),
    );
    for (const record of snapshot.records) {
      for (const ancestor of ancestorsOf(record.thread.id)) {
        const counts = expected.get(ancestor);
        if (!counts) {
          problems.push(`${record.thread.id} has an ancestor ${ancestor} missing from the registry`);
          continue;
        }
        counts.total++;
        if (!isTerminal(record.thread.status)) counts.live++;
      }
    }
    for (const record of snapshot.records) {
      const counts = expected.get(record.thread.id)!;
      if (record.subtreeTotal !== counts.total || record.subtreeLive !== counts.live)
        problems.push(
          `${record.thread.path}: counters live ${record.subtreeLive}/total ${record.subtreeTotal}, registry says ${counts.live}/${counts.total}`,
        );
    }
    const root = snapshot.records.find((record) => record.thread.parentId === null);
    if (root && root.subtreeTotal > snapshot.grant.maxTotal)
      problems.push(`lifetime spawns ${root.subtreeTotal} exceed maxTotal ${snapshot.grant.maxTotal}`);
  }
  const final = snapshots.at(-1)!;
  const admitted = new Map<string, string>();
  for (const entry of log) {
    if (entry.type !== 'spawn' || !entry.threadId) continue;
    const copies = final.records.filter((record) => record.thread.id === entry.threadId).length;
    if (copies !== 1)
      problems.push(`acknowledged spawn ${entry.threadId} is in the registry ${copies} times`);
    if (entry.requestId) {
      const earlier = admitted.get(entry.requestId);
      if (earlier && earlier !== entry.threadId)
        problems.push(`request ${entry.requestId} admitted twice: ${earlier} and ${entry.threadId}`);
      admitted.set(entry.requestId, entry.threadId);
    }
  }
  return problems;
}

/**
 * S5.2-S5.5: per receiver session seqs strictly increase; across sessions nothing is skipped, and an
 * item is delivered again only if it was not acknowledged: the previous session's last item (dropped
 * without ack) or an interaction not resolved before the session opened.
 */
export function checkNotifications(log: readonly LogEntry[]): string[] {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  const resolved = new Set<string>();
  const lastOf = new Map<number, number>();
  let previousLast: number | undefined;
  let currentSession: number | undefined;
  let maxSeen = 0;
  for (const entry of log) {
    if (entry.type === 'resolved') resolved.add(entry.requestId);
    if (entry.type === 'receiver-open') {
      if (currentSession !== undefined) previousLast = lastOf.get(currentSession);
      currentSession = entry.session;
    }
    if (entry.type !== 'recv') continue;
    const last = lastOf.get(entry.session);
    if (last !== undefined && entry.seq <= last)
      problems.push(`session ${entry.session}: seq ${entry.seq} after ${last} (not strictly increasing)`);
    const earlierId = seen.get(entry.seq);
    if (earlierId !== undefined && earlierId !== entry.id)
      problems.push(`seq ${entry.seq} was ${earlierId}, now ${entry.id}`);
    if (earlierId !== undefined) {
      const droppedWithoutAck = entry.seq === previousLast;
      const pendingInteraction =
        entry.kind === 'interaction' && entry.requestId !== undefined && !resolved.has(entry.requestId);
      if (!droppedWithoutAck && !pendingInteraction)
        problems.push(
          `session ${entry.session}: acknowledged item ${entry.seq} (${entry.kind}) delivered again`,
        );
    } else if (entry.seq > maxSeen + 1) {
      problems.push(`session ${entry.session}: seqs ${maxSeen + 1}..${entry.seq - 1} were skipped`);
    }
    seen.set(entry.seq, entry.id);
    maxSeen = Math.max(maxSeen, entry.seq);
    lastOf.set(entry.session, entry.seq);
  }
  return problems;
}

/** S3.5: shutdown ends every thread, reports nothing failed or unconfirmed. */
export function checkShutdown(log: readonly LogEntry[]): string[] {
  const report = [...log].reverse().find((entry) => entry.type === 'shutdown');
  if (!report || report.type !== 'shutdown') return ['the run was not shut down'];
  const problems: string[] = [];
  if (report.report.failed.length > 0)
    problems.push(`shutdown reports failed threads: ${report.report.failed.join(', ')}`);
  if (report.report.unconfirmed.length > 0)
    problems.push(`shutdown reports unconfirmed threads: ${report.report.unconfirmed.join(', ')}`);
  const snapshot = [...log].reverse().find((entry) => entry.type === 'snapshot');
  if (snapshot?.type === 'snapshot' && log.indexOf(snapshot) > log.indexOf(report)) {
    for (const record of snapshot.snapshot.records) {
      if (record.thread.parentId !== null && !isTerminal(record.thread.status))
        problems.push(`${record.thread.path} is still ${record.thread.status} after shutdown`);
    }
  }
  return problems;
}
