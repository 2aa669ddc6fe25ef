import type { ShutdownReport } from './control';
import { parseId } from './ids';
import { closed, denied } from './run-errors';
import type { ThreadRecord } from './run-snapshot';
import { ControlScope, isTerminal } from './schemas';
import type { ThreadRegistry } from './thread-registry';

/**
 * Stopping the threads of a root run: interrupting a descendant's turn (SPEC S4.6), closing a subtree
 * (S4.8), and shutting the whole run down with a report of how every sub-agent ended (S3.5).
 */
export class RunShutdown {
  constructor(
    private readonly registry: ThreadRegistry,
    private report: ShutdownReport | undefined,
  ) {}

  /** The shutdown report, once shutdown has finished. */
  get shutdown(): ShutdownReport | undefined {
    return this.report;
  }

  /** SPEC S4.6: who may interrupt `threadId` — its ancestors, and the root itself. */
  interruptTarget(scope: ControlScope, threadId: unknown): ThreadRecord {
    const caller = this.registry.caller(scope);
    const target = this.registry.get(parseId('thread', threadId, 'threadId'));
    const { rootId } = this.registry;
    const allowed =
      target &&
      (target.thread.id === rootId
        ? caller.thread.id === rootId
        : target.thread.id !== caller.thread.id &&
          this.registry.isSelfOrAncestor(caller.thread.id, target.thread.id));
    if (!target || !allowed)
      throw denied(
        `thread ${caller.thread.path} may only interrupt its descendants, not ${String(threadId)}`,
      );
    return target;
  }

  /** SPEC S4.8: marks a descendant and its live subtree cancelled; returns the threads to stop. */
  closeSubtree(scope: ControlScope, threadId: unknown, at: string): ThreadRecord[] {
    const caller = this.registry.caller(scope);
    const target = this.registry.get(parseId('thread', threadId, 'threadId'));
    if (
      !target ||
      target.thread.id === caller.thread.id ||
      !this.registry.isSelfOrAncestor(caller.thread.id, target.thread.id)
    ) {
      throw denied(`thread ${caller.thread.path} may only close its descendants, not ${String(threadId)}`);
    }
    if (isTerminal(target.thread.status))
      throw closed(`thread ${target.thread.path} is already ${target.thread.status}`);
    return this.registry.cancelSubtree(target, at);
  }

  /** The live threads below `threadId` (not itself). */
  liveBelow(threadId: string): ThreadRecord[] {
    return this.registry
      .all()
      .filter(
        (record) =>
          record.thread.id !== threadId &&
          !isTerminal(record.thread.status) &&
          this.registry.isSelfOrAncestor(threadId, record.thread.id),
      );
  }

  /** SPEC S4.8: marks the live threads below `threadId` cancelled, as its close would; returns them. */
  closeBelow(threadId: string, at: string): ThreadRecord[] {
    const below = new Set(this.liveBelow(threadId));
    return this.registry.cancelLive((record) => below.has(record), at);
  }

  /** SPEC S3.5: marks every live sub-agent cancelled; returns the threads to stop. */
  begin(at: string): ThreadRecord[] {
    return this.registry.cancelLive((record) => record.thread.id !== this.registry.rootId, at);
  }

  /** Sub-agents whose end is not confirmed by their workflow. */
  unconfirmed(): ThreadRecord[] {
    return this.registry.subAgents().filter((record) => !record.ended);
  }

  /** Records the outcome of shutdown (once): every sub-agent cancelled, failed, or not confirmed. */
  finish(at: string): ShutdownReport {
    const subAgents = this.registry.subAgents();
    const ids = (select: (record: ThreadRecord) => boolean) =>
      subAgents.filter(select).map((record) => record.thread.id);
    this.report ??= {
      cancelled: ids((record) => record.ended && record.thread.status === 'cancelled'),
      failed: ids((record) => record.thread.status === 'failed'),
      unconfirmed: ids((record) => !record.ended),
      completedAt: at,
    };
    return this.report;
  }
}
