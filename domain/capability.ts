import { z } from 'zod';
import { hmacSha256Hex } from './bytes';
import { ErrorKind, KitError } from './errors';
import { matching, ThreadId } from './ids';

/**
 * SPEC S3.9: authority is proven, not claimed. A root run has a *run key*, 32 random bytes the attaching
 * client makes and keeps (the root capability). Every workflow of the tree holds it in its input, so
 * it can check any proof and mint its own; nobody else can. A thread's capability names the thread,
 * its ancestors and its run, and proves all three with an HMAC under the run key: a caller cannot claim
 * to be another thread, nor to sit elsewhere in the tree.
 */
const hex64 = /^[0-9a-f]{64}$/;

/** A run key: 64 lowercase hex digits (32 random bytes). Secret: whoever holds it has root authority. */
export const RunKey = matching(hex64, 'expected 64 lowercase hex digits (a run key)');
export type RunKey = z.infer<typeof RunKey>;

/** The deepest a lineage can be: the grant's maxDepth is at most 64. */
const maxLineage = 64;

/** A thread's capability: the proof that the holder acts as `threadId` of root run `rootId`. */
export const Capability = z
  .object({
    rootId: ThreadId,
    threadId: ThreadId,
    /** The thread's ancestors, the root first; empty for the root itself. */
    lineage: z.array(ThreadId).max(maxLineage),
    proof: matching(hex64, 'expected 64 lowercase hex digits (a proof)'),
  })
  .strict();
export type Capability = z.infer<typeof Capability>;

/**
 * Whose a capability is: the thread's own workflow's (`workflow`: minted by the tree's workflows, which
 * hold the run key), or one the backend handed a service to act as that thread through the control API
 * (`delegated`: `ThreadService.capabilityOf`). Both act as the thread in every control operation; only a
 * workflow's may send what the tree's workflows tell each other about themselves — a turn's or the
 * thread's end, a budget charge, an interaction's settlement, a control answer, live output — so a
 * service holding a thread's capability cannot rewrite the root's registry or counters (SPEC S3.9).
 */
export type CapabilityKind = 'workflow' | 'delegated';

/** What a proof covers; the version prefix keeps proofs of this protocol apart from any later one. */
const provenText = (kind: CapabilityKind, rootId: string, lineage: readonly string[], threadId: string) =>
  `agents-kit/v1/${kind === 'workflow' ? 'capability' : 'delegated'}\n${rootId}\n${lineage.join('/')}\n${threadId}`;

/** The capability of `threadId` (whose ancestors, root first, are `lineage`) in the run of `runKey`. */
export function mintCapability(
  runKey: string,
  rootId: ThreadId,
  lineage: readonly ThreadId[],
  threadId: ThreadId,
  kind: CapabilityKind = 'workflow',
): Capability {
  return {
    rootId,
    threadId,
    lineage: [...lineage],
    proof: hmacSha256Hex(runKey, provenText(kind, rootId, lineage, threadId)),
  };
}

/** The root thread's own capability. */
export const rootCapability = (runKey: string, rootId: ThreadId): Capability =>
  mintCapability(runKey, rootId, [], rootId);

/**
 * Why `raw` is not a valid capability of the run (`rootId`, `runKey`), or undefined when it is. A
 * lineage must start at the root (the root's own is empty) and the proof must match. `workflowOnly`:
 * a delegated capability is refused too (what only the thread's own workflow may send).
 */
export function capabilityRefusal(
  runKey: string,
  rootId: string,
  raw: unknown,
  workflowOnly = false,
): string | undefined {
  const parsed = Capability.safeParse(raw);
  if (!parsed.success) return 'capability: expected { rootId, threadId, lineage, proof }';
  const { rootId: claimedRoot, threadId, lineage, proof } = parsed.data;
  if (claimedRoot !== rootId) return `capability belongs to root run ${claimedRoot}, not ${rootId}`;
  const wellPlaced =
    threadId === rootId ? lineage.length === 0 : lineage[0] === rootId && !lineage.includes(threadId);
  if (!wellPlaced) return `capability of ${threadId} has a lineage that does not start at the root`;
  if (proves(runKey, provenText('workflow', rootId, lineage, threadId), proof)) return undefined;
  if (!proves(runKey, provenText('delegated', rootId, lineage, threadId), proof))
    return `capability of ${threadId}: the proof does not match`;
  return workflowOnly
    ? `capability of ${threadId} was handed to a service (capabilityOf): only that thread's own workflow may send this`
    : undefined;
}

/**
 * Proofs already checked (a pure function of its inputs, so remembering them is deterministic): a
 * caller sends the same capability with every request, and an HMAC in plain TypeScript costs ~0.15 ms.
 */
const checkedProofs = new Map<string, boolean>();
const maxCheckedProofs = 1_000;

function proves(runKey: string, text: string, proof: string): boolean {
  const key = `${runKey}\n${proof}\n${text}`;
  const known = checkedProofs.get(key);
  if (known !== undefined) return known;
  const valid = proof === hmacSha256Hex(runKey, text);
  if (checkedProofs.size >= maxCheckedProofs) checkedProofs.delete(checkedProofs.keys().next().value!);
  checkedProofs.set(key, valid);
  return valid;
}

/** The capability, checked; PermissionDenied when it does not prove what it claims (SPEC S3.9). */
export function provenCapability(runKey: string, rootId: string, raw: unknown): Capability {
  const refusal = capabilityRefusal(runKey, rootId, raw);
  if (refusal) throw new KitError(ErrorKind.PermissionDenied, refusal);
  return raw as Capability;
}

/** Whether `capability` is of `threadId` itself or of one of its descendants. */
export const isSelfOrBelow = (capability: Capability, threadId: string): boolean =>
  capability.threadId === threadId || capability.lineage.includes(threadId as ThreadId);

/** Whether the holder of `capability` is an ancestor of a thread whose ancestors are `lineage`. */
export const isAncestorOf = (capability: Capability, lineage: readonly string[]): boolean =>
  lineage.includes(capability.threadId);

/** The most capabilities one {@link checkProofs} query checks. */
export const maxProofsPerCheck = 100;

/** What a reader asks a thread's workflow: which of `capabilities` prove what they claim (SPEC S10.2). */
export const ProofCheckRequest = z
  .object({ from: z.unknown(), capabilities: z.array(z.unknown()).max(maxProofsPerCheck) })
  .strict();
export type ProofCheckRequest = z.infer<typeof ProofCheckRequest>;

/** Its answer: one boolean per capability asked, or why the asker was refused. */
export type ProofCheckAnswer = { proven: boolean[] } | { refused: string };

/**
 * SPEC S10.2, S3.9: a reader holding a thread's capability, not the run key, learns from that thread's
 * workflow (which holds the key) which capabilities in the tree's histories are proven, so it decides
 * what each workflow accepted as the workflow did. Only a proven asker is answered. Whether a
 * capability found in a history is valid is all it learns: nothing about the key, nothing that lets it
 * make one.
 */
export function checkProofs(runKey: string, rootId: string, raw: unknown): ProofCheckAnswer {
  const request = ProofCheckRequest.safeParse(raw);
  if (!request.success)
    return { refused: `check-proofs: expected { from, capabilities } with at most ${maxProofsPerCheck}` };
  const refusal = capabilityRefusal(runKey, rootId, request.data.from);
  if (refusal) return { refused: refusal };
  return {
    proven: request.data.capabilities.map(
      (capability) => capabilityRefusal(runKey, rootId, capability) === undefined,
    ),
  };
}
