import { setHandler } from '@temporalio/workflow';
import {
  checkProofs,
  isAncestorOf,
  mintCapability,
  provenCapability,
  type Capability,
} from '../domain/capability';
import { checkProofsQuery } from '../domain/messages';
import { ErrorKind, KitError } from '../domain/errors';
import type { ThreadId } from '../domain/ids';

const denied = (message: string) => new KitError(ErrorKind.PermissionDenied, message);

/**
 * What a thread's workflow knows to check its callers itself (SPEC S3.1, S3.9): its run key, its own
 * capability (so its ancestors), and from a caller's proven capability the caller's place in the tree.
 */
export class ThreadAuthority {
  readonly self: Capability;

  constructor(
    readonly runKey: string,
    rootId: ThreadId,
    lineage: readonly ThreadId[],
    threadId: ThreadId,
  ) {
    this.self = mintCapability(runKey, rootId, lineage, threadId);
  }

  get threadId(): ThreadId {
    return this.self.threadId;
  }

  get rootId(): ThreadId {
    return this.self.rootId;
  }

  /** The caller's capability, proven; PermissionDenied otherwise. */
  caller(raw: unknown): Capability {
    return provenCapability(this.runKey, this.rootId, raw);
  }

  /** SPEC S4.3: a thread takes messages from its ancestors and its descendants. */
  checkMayMessage(caller: Capability, path: string): void {
    const related =
      caller.threadId !== this.threadId &&
      (isAncestorOf(caller, this.self.lineage) || caller.lineage.includes(this.threadId));
    if (!related)
      throw denied(`thread ${caller.threadId} may only message its ancestors and descendants, not ${path}`);
  }

  /** SPEC S4.6: a thread is interrupted by its ancestors (the root by the root). */
  checkMayInterrupt(caller: Capability, path: string): void {
    const allowed =
      this.threadId === this.rootId
        ? caller.threadId === this.rootId
        : isAncestorOf(caller, this.self.lineage);
    if (!allowed) throw denied(`thread ${caller.threadId} may only interrupt its descendants, not ${path}`);
  }

  /** SPEC S4.5: a thread is watched by itself and its ancestors (whose subtree it is in). */
  checkMayWatch(caller: Capability): void {
    if (caller.threadId !== this.threadId && !isAncestorOf(caller, this.self.lineage))
      throw denied(`thread ${caller.threadId} may not watch ${this.threadId}: it is not in its subtree`);
  }

  /** SPEC S5.4, S5.9: a thread's interactions are answered for it by itself or an ancestor. */
  checkMayResolve(caller: Capability, path: string): void {
    if (caller.threadId !== this.threadId && !isAncestorOf(caller, this.self.lineage))
      throw denied(`thread ${caller.threadId} may not answer the interactions of ${path}`);
  }
}

/**
 * SPEC S10.2: answers `check-proofs` queries (a reader streaming a subtree with a thread's capability
 * asks which capabilities in the histories are proven). A query: nothing in the history, no action.
 */
export function registerProofChecks(authority: ThreadAuthority): void {
  setHandler(checkProofsQuery, (raw) => checkProofs(authority.runKey, authority.rootId, raw));
}
