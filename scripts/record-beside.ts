// The scenarios scripts/record-histories.ts records beside the v1 histories, by flag: each a feature
// added after v1, whose runs are kept under their own prefix and replayed with the others.
import type { Client } from '@temporalio/client';
import { recordApprovalPolicy } from './record-approval-policy';
import { recordBudgets } from './record-budgets';
import { recordCancelRequest } from './record-cancel-request';
import { recordCancelWhileEnding } from './record-cancel-while-ending';
import { recordCancelWhileReleasing } from './record-cancel-releasing';
import { recordStopWhileContinuing } from './record-stop-continuing';
import {
  recordCancelClosesSubtree,
  recordChildCloseEnds,
  recordEarlierRunEnds,
  recordEarlierRunEndsOnWait,
  recordOutsideEndsCheck,
  recordOutsideEndsWindDown,
} from './record-outside-ends';
import { recordLiveOutput } from './record-live-output';
import { recordRetiredPages } from './record-retired-pages';
import { recordPublisherSpeaksForItself } from './record-publisher-speaks';
import { recordScriptedTokensCharged } from './record-scripted-tokens';
import { recordSpawnKeyedByUpdate } from './record-spawn-keyed';
import { recordLongUpdateIds, recordPolicyRetry } from './record-update-retry';
import { recordTriggerTurnRoom } from './record-trigger-room';
import { recordOwnerless } from './record-ownerless';
import { recordRootGone } from './record-root-gone';
import { recordModelToolsSpareSelf } from './record-model-self';
import {
  recordRootWaitCountsAskedTurns,
  recordWatchEndsWithThread,
  recordWatchWakesAtThreadEnd,
} from './record-late-turns';
import { recordPagesBeforeContinuing, recordPageTrafficBeforeContinuing } from './record-pages-first';
import { holdsLiveOutput, takesPatch, type RunSelection } from './write-histories';

interface Scenario {
  record: (client: Client, taskQueue: string) => Promise<void>;
  prefix: string;
  selection: RunSelection;
}

/** A scenario of one patch: its runs are named after the patch, and those that take it are kept. */
const ofPatch = (patch: string, record: Scenario['record']): Scenario => ({
  record,
  prefix: patch,
  selection: { takes: takesPatch(patch) },
});

export const scenarios: Record<string, Scenario> = {
  '--live': {
    record: recordLiveOutput,
    prefix: 'live-output',
    selection: { takes: holdsLiveOutput, withSenders: true },
  },
  '--approval': { record: recordApprovalPolicy, prefix: 'approvalPolicy', selection: { takes: () => true } },
  '--budgets': { record: recordBudgets, prefix: 'budgets', selection: { takes: () => true } },
  // The budget scenario again, attached with the `transcriptDelta` feature: its model-kernel threads'
  // calls carry only the transcript entries their worker does not keep yet.
  '--transcripts': { record: recordBudgets, prefix: 'transcriptDelta', selection: { takes: () => true } },
  // Patch `cancelRequestStops`: Temporal's cancel request to agents and to the root run.
  '--cancel': { record: recordCancelRequest, prefix: 'cancelRequestStops', selection: { takes: () => true } },
  // Patch `cancelWhileEnding`: a cancel request while an agent or a root run ends by itself.
  '--cancel-ending': {
    record: recordCancelWhileEnding,
    prefix: 'cancelWhileEnding',
    selection: { takes: () => true },
  },
  // Patch `cancelWhileReleasing`: a cancel request while a root run or an agent prepares to continue as new.
  '--cancel-releasing': ofPatch('cancelWhileReleasing', recordCancelWhileReleasing),
  // Patch `cancelClosesSubtree`: an agent with a live sub-agent cancelled from outside.
  '--cancel-subtree': {
    record: recordCancelClosesSubtree,
    prefix: 'cancelClosesSubtree',
    selection: { takes: () => true },
  },
  // Patch `childCloseEnds`: an agent's workflow terminated from outside.
  '--child-close': {
    record: recordChildCloseEnds,
    prefix: 'childCloseEnds',
    selection: { takes: () => true },
  },
  // Patch `outsideEndsWindDown`: a terminated agent's sub-agent and conversation; a close finding an
  // agent gone.
  '--outside-ends': ofPatch('outsideEndsWindDown', recordOutsideEndsWindDown),
  // Patch `earlierRunEndsChecked`: a spawn refused for room finds an earlier run's agent terminated.
  '--earlier-ends': ofPatch('earlierRunEndsChecked', recordEarlierRunEnds),
  // Patch `earlierRunEndsOnWait`: a wait finds an earlier run's agent terminated mid-turn.
  '--earlier-ends-wait': ofPatch('earlierRunEndsOnWait', recordEarlierRunEndsOnWait),
  // Patch `earlierRunEndsAskedBeside`: both asks above, as an activity; the wait's beside the wait.
  '--earlier-ends-beside': {
    record: async (client, taskQueue) => {
      await recordEarlierRunEnds(client, taskQueue);
      await recordEarlierRunEndsOnWait(client, taskQueue);
    },
    prefix: 'earlierRunEndsAskedBeside',
    selection: { takes: takesPatch('earlierRunEndsAskedBeside') },
  },
  // The `outsideEndsCheckMs` feature: the root's own check finds an earlier run's agent terminated.
  '--outside-ends-check': {
    record: recordOutsideEndsCheck,
    prefix: 'outsideEndsCheckMs',
    selection: { takes: () => true },
  },
  // Patch `retiredPagesEnd`: an unread, paged conversation retires; its pages are cancelled.
  '--retired-pages': ofPatch('retiredPagesEnd', recordRetiredPages),
  // Patch `spawnKeyedByUpdate`: a raw spawn with no request id, retried after the root continued as new.
  '--spawn-keyed': ofPatch('spawnKeyedByUpdate', recordSpawnKeyedByUpdate),
  // Patch `publisherSpeaksForItself`: a thread's publish of another thread's item, by signal, dropped.
  '--publisher-speaks': ofPatch('publisherSpeaksForItself', recordPublisherSpeaksForItself),
  // Patch `triggerTurnRoom`: a parent's triggerTurn message goes into its kid's full mailbox.
  '--trigger-room': ofPatch('triggerTurnRoom', recordTriggerTurnRoom),
  // Patch `scriptedTokensCharged`: scripted replies' tokens charged as reached, past a budget of 1000.
  '--scripted-tokens': ofPatch('scriptedTokensCharged', recordScriptedTokensCharged),
  // Patch `ownerlessNotForTrees`: forged items in conversations no thread owns, readers with a capability.
  '--ownerless': ofPatch('ownerlessNotForTrees', recordOwnerless),
  // Patch `rootGoneEndsThread`: a root terminated from outside; its sub-agent ends at its next turn.
  '--root-gone': ofPatch('rootGoneEndsThread', recordRootGone),
  // Patch `pagesBeforeContinuing`: a publish spills many pages at once past a receiver at the end.
  '--pages-first': ofPatch('pagesBeforeContinuing', recordPagesBeforeContinuing),
  // Patch `pageTrafficBeforeContinuing`: a paged backlog read while its conversation continues as new.
  '--pages-quiet': ofPatch('pageTrafficBeforeContinuing', recordPageTrafficBeforeContinuing),
  // Patch `stopWhileContinuing`: a shutdown, then a close, while a root run or an agent is due to continue
  // as new and waits out its shortest life.
  '--stop-continuing': ofPatch('stopWhileContinuing', recordStopWhileContinuing),
  // Patch `longUpdateIdsRemembered`: a message and a take of the root's messages with update ids over 200
  // characters, each retried after its workflow continued as new.
  '--long-ids': ofPatch('longUpdateIdsRemembered', recordLongUpdateIds),
  // Patch `policyChangeRemembered`: an approval policy change retried after the root continued as new.
  '--policy-retry': ofPatch('policyChangeRemembered', recordPolicyRetry),
  // Patch `watchEndsWithThread`: a watch of live output once its thread has been closed.
  '--watch-ended': ofPatch('watchEndsWithThread', recordWatchEndsWithThread),
  // Patch `rootWaitCountsAskedTurns`: the root kernel's wait right after its own triggering message.
  '--asked-turns': ofPatch('rootWaitCountsAskedTurns', recordRootWaitCountsAskedTurns),
  // Patch `watchWakesAtThreadEnd`: a watch of live output waiting when its thread is closed.
  '--watch-woken': ofPatch('watchWakesAtThreadEnd', recordWatchWakesAtThreadEnd),
  // Patch `modelToolsSpareSelf`: a root's model interrupts itself and waits on itself (an HTTP model).
  '--model-self': ofPatch('modelToolsSpareSelf', recordModelToolsSpareSelf),
};

/**
 * What the command line asks for: `--add <patch id>` keeps the recorded histories and adds the new
 * path's beside them; each flag of `scenarios` records only its scenario and adds its runs beside them;
 * neither records the v1 histories again.
 */
export function chosenRecording(argv: readonly string[]) {
  const addAt = argv.indexOf('--add');
  const added = addAt >= 0 ? argv[addAt + 1] : undefined;
  const flags = Object.keys(scenarios).filter((flag) => argv.includes(flag));
  if (addAt >= 0 && !/^[A-Za-z][A-Za-z0-9-]*$/.test(added ?? ''))
    throw new Error(`--add needs a patch id from workflows/patches.ts, got ${added}`);
  if (flags.length + (added ? 1 : 0) > 1)
    throw new Error(`--add and ${Object.keys(scenarios).join(', ')} record different runs: pass one`);
  return { scenario: flags[0] === undefined ? undefined : scenarios[flags[0]]!, added };
}
