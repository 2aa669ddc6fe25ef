// Writes every workflow run of a namespace as a golden history (used by scripts/record-histories.ts).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToFixture, type HistoryFixture } from '../test/helpers/histories';
import { projectRoot } from '../test/helpers/paths';

const fixturesDir = join(projectRoot, 'test', 'fixtures', 'histories');
const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

type History = temporal.api.history.v1.IHistory;

/** Whether a run recorded the marker of patch `patchId` (it took the patched path). */
export const takesPatch =
  (patchId: string) =>
  (history: History): boolean =>
    (history.events ?? []).some(
      (event) =>
        event.markerRecordedEventAttributes?.markerName === 'core_patch' &&
        Object.values(event.markerRecordedEventAttributes.details ?? {}).some((payloads) =>
          (payloads.payloads ?? []).some((payload) =>
            Buffer.from(payload.data ?? [])
              .toString('utf8')
              .includes(JSON.stringify(patchId)),
          ),
        ),
    );

/** Whether a run streamed live output (SPEC S10.1): it took a `live-output` signal or a `watch-output` update. */
export const holdsLiveOutput = (history: History): boolean =>
  (history.events ?? []).some(
    (event) =>
      event.workflowExecutionSignaledEventAttributes?.signalName === 'live-output' ||
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'watch-output',
  );

/** What a recording beside the others keeps: the runs of one new path. */
export interface RunSelection {
  /** Whether a run took the path (by its history). */
  takes: (history: History) => boolean;
  /**
   * Also the runs that started or signalled one that took it (the agent whose model call streams to
   * its conversation). The runs one that took it signalled are always kept.
   */
  withSenders?: boolean;
}

/** The run ids that started or signalled this run (its parent, and every workflow that signalled it). */
const sendersOf = (history: History): string[] =>
  (history.events ?? []).flatMap((event) => {
    const sender =
      event.workflowExecutionStartedEventAttributes?.parentWorkflowExecution ??
      event.workflowExecutionSignaledEventAttributes?.externalWorkflowExecution;
    return sender?.runId ? [sender.runId] : [];
  });

/**
 * Every run of every workflow in the namespace, its history written as JSON under `<prefix>-…` names,
 * replacing the recorded ones; with a `selection` (a patch's or a new feature's histories beside the
 * v1 ones), only the runs it takes and the runs linked to them, and nothing is deleted.
 */
export async function writeHistories(
  client: Client,
  prefix: string,
  selection?: RunSelection,
): Promise<void> {
  if (!selection) rmSync(fixturesDir, { recursive: true, force: true });
  mkdirSync(fixturesDir, { recursive: true });
  const counts = new Map<string, number>();
  const executions = [];
  for await (const execution of client.workflow.list()) executions.push(execution);
  executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const histories = new Map<string, History>();
  for (const execution of executions)
    histories.set(
      execution.runId,
      await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory(),
    );
  // A new path also shows in the runs it signals (a conversation forwarding what its thread left to
  // it): they are kept with the runs that took it, and so are the runs that started or signalled
  // those, when the selection asks for them.
  const taking = executions.filter((execution) => selection?.takes(histories.get(execution.runId)!));
  const takingRuns = new Set(taking.map((execution) => execution.runId));
  const takingIds = new Set(taking.map((execution) => execution.workflowId));
  const senders = new Set(
    selection?.withSenders ? taking.flatMap((execution) => sendersOf(histories.get(execution.runId)!)) : [],
  );
  const kept = (runId: string, history: History) =>
    !selection ||
    takingRuns.has(runId) ||
    senders.has(runId) ||
    (history.events ?? []).some((event) =>
      takingIds.has(
        event.workflowExecutionSignaledEventAttributes?.externalWorkflowExecution?.workflowId ?? '',
      ),
    );
  for (const execution of executions) {
    const kind = execution.type
      .replace(/Workflow$/, '')
      .replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    const index = (counts.get(kind) ?? 0) + 1;
    counts.set(kind, index);
    const history = histories.get(execution.runId)!;
    // A run whose first workflow task has not completed yet has nothing to replay (and the replayer
    // waits on it forever): leave it out.
    const taskCompleted = temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED;
    if (!history.events?.some((event) => event.eventType === taskCompleted)) {
      log(`${execution.workflowId} (${execution.runId}): no workflow task completed yet, not recorded`);
      continue;
    }
    // Beside the v1 ones, only the runs of the new path: the rest replay as v1 does.
    if (!kept(execution.runId, history)) continue;
    const name = `${prefix}-${kind}-${String(index).padStart(2, '0')}-${execution.status.name.toLowerCase()}`;
    writeFileSync(
      join(fixturesDir, `${name}.json`),
      JSON.stringify({
        workflowId: execution.workflowId,
        workflowType: execution.type,
        history: historyToFixture(history),
      } satisfies HistoryFixture),
    );
    log(`${name}: ${history.events?.length ?? 0} events`);
  }
  const total = readdirSync(fixturesDir).reduce(
    (sum, file) => sum + statSync(join(fixturesDir, file)).size,
    0,
  );
  log(`${executions.length} histories, ${Math.round(total / 1024)} KiB in ${fixturesDir}`);
}
