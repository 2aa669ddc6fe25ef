import type { WorkflowClient } from '@temporalio/client';
import { Capability, capabilityRefusal } from '../domain/capability';
import { ErrorKind, KitError } from '../domain/errors';
import { checkProofsQuery } from '../domain/messages';

/** Whether a capability found in a history proves what it claims (the workflow accepted its sender). */
export type ProofCheck = (from: unknown) => Promise<boolean>;

/** With the run's key (the root's holder): checked here, as the workflows check it. */
export const checkedWithKey =
  (runKey: string, rootId: string): ProofCheck =>
  (from) =>
    Promise.resolve(capabilityRefusal(runKey, rootId, from) === undefined);

/** Answers remembered per reader: a subtree's senders are few (one capability per thread). */
const rememberedAnswers = 10_000;

/**
 * With a thread's capability only (SPEC S10.2, a subtree's reader): the thread's own workflow, which
 * holds the key, checks each distinct capability once (a `check-proofs` query: no action, nothing in any
 * history). What does not even parse as a capability is refused here, without asking.
 */
export function checkedByThread(
  workflows: Pick<WorkflowClient, 'getHandle'>,
  capability: Capability,
): ProofCheck {
  const answers = new Map<string, Promise<boolean>>();
  return (from) => {
    if (!Capability.safeParse(from).success) return Promise.resolve(false);
    const key = JSON.stringify(from);
    let answer = answers.get(key);
    if (!answer) {
      answer = ask(workflows, capability, from);
      // A failed query is asked again by the next event that needs it.
      answer.catch(() => answers.delete(key));
      if (answers.size >= rememberedAnswers) answers.delete(answers.keys().next().value!);
      answers.set(key, answer);
    }
    return answer;
  };
}

/** Tries of one check: a query fails while no worker can answer it (a deploy, a restart). */
const queryTries = 30;

async function ask(
  workflows: Pick<WorkflowClient, 'getHandle'>,
  capability: Capability,
  from: unknown,
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    let result;
    try {
      result = await workflows
        .getHandle(capability.threadId)
        .query(checkProofsQuery, { from: capability, capabilities: [from] });
    } catch (error) {
      if (attempt >= queryTries) throw error;
      await new Promise((done) => setTimeout(done, 1_000));
      continue;
    }
    if ('refused' in result) throw new KitError(ErrorKind.PermissionDenied, `streamTree: ${result.refused}`);
    return result.proven[0] === true;
  }
}
