import { patched } from '@temporalio/workflow';
import { ErrorKind, KitError } from '../domain/errors';
import { patches } from './patches';

/**
 * SPEC S3.9: what a conversation without an owner tells a reader who proves a capability.
 *
 * A reader that sends a capability is reading a thread's conversation: it trusts what it gets to be what
 * that thread (or its tree) published. Only an owned conversation can check that: it holds its run's key.
 * An owner-less one is a standalone conversation, or one that anybody with a Temporal client started
 * under a thread's conversation id (before its thread, or after its thread's conversation completed,
 * SPEC S5.10), and it took every publish without a proof. So such a reader is refused there
 * (`PermissionDenied`, the answer a conversation of another tree gives: it cannot prove itself to this
 * capability) as soon as the conversation holds anything, and while it holds nothing the reader is given
 * nothing (`idle`) until the thread claims it: a receiver may open a thread's conversation just before
 * its thread starts it (spawn answers first), and then gets the thread's items after its claim.
 *
 * Checked in the open and receive validators, which leave no history; what the handlers do differently
 * is guarded by {@link patches.ownerlessNotForTrees}.
 */
export interface OwnerlessView {
  conversationId: string;
  /** Whether a thread owns the conversation (its owner holds the run key that checks proofs). */
  owned(): boolean;
  /** Whether anything was ever published here, or the conversation was closed. */
  touched(): boolean;
}

/** Why a reader proving `from` may not read this conversation (see above), or undefined. */
export function ownerlessRefusal(view: OwnerlessView, from: unknown, what: string): string | undefined {
  if (from === undefined || view.owned() || !view.touched()) return undefined;
  const claimed = (from as { rootId?: unknown }).rootId;
  return `${what}: conversation ${view.conversationId} belongs to no thread (a standalone conversation, or one started by someone else under that id) and took items nobody proved, so it is not a conversation of root run ${String(claimed)}: nothing is delivered to a reader with a capability; read it without one if it is a standalone conversation you trust`;
}

/** Throws PermissionDenied for {@link ownerlessRefusal}. */
export function checkOwnerlessReader(view: OwnerlessView, from: unknown, what: string): void {
  const refusal = ownerlessRefusal(view, from, what);
  if (refusal) throw new KitError(ErrorKind.PermissionDenied, refusal);
}

/**
 * Whether a receive by a reader proving `from` answers `idle` instead of an item: the conversation has
 * no owner, so nothing in it is proven (an item published while the receive waited, after its
 * validator). The reader polls again and its validator refuses it.
 */
export const withheldFrom = (view: OwnerlessView, from: unknown): boolean =>
  from !== undefined && !view.owned() && patched(patches.ownerlessNotForTrees);

/**
 * Whether a thread's claim (adopt-conversation) of an owner-less conversation must be dropped: it already
 * holds items nobody proved, which would then be read as the thread's. The conversation stays
 * owner-less, so proven readers are refused there rather than handed those items.
 */
export const claimRefused = (view: OwnerlessView): boolean =>
  view.touched() && patched(patches.ownerlessNotForTrees);
