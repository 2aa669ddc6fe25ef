// Writes every workflow run of a namespace as a golden history (used by scripts/record-histories.ts).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToFixture, type HistoryFixture } from '../test/helpers/histories';
import { projectRoot } from '../test/helpers/paths';

const fixturesDir = join(projectRoot, 'test', 'fixtures', 'histories');
const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

/** Whether a run recorded the marker of patch `patchId` (it took the patched path). */
const takesPatch = (history: temporal.api.history.v1.IHistory, patchId: string): boolean =>
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

/**
 * Every run of every workflow in the namespace, its history written as JSON under `<prefix>-…` names;
 * with `replace` false (a patch's histories beside the v1 ones), only the runs that took the patch and
 * the runs they signalled.
 */
export async function writeHistories(client: Client, prefix: string, replace: boolean): Promise<void> {
  if (replace) rmSync(fixturesDir, { recursive: true, force: true });
  mkdirSync(fixturesDir, { recursive: true });
  const counts = new Map<string, number>();
  const executions = [];
  for await (const execution of client.workflow.list()) executions.push(execution);
  executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const histories = new Map<string, temporal.api.history.v1.IHistory>();
  for (const execution of executions)
    histories.set(
      execution.runId,
      await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory(),
    );
  // A patch's new path also shows in the runs it signals (a conversation forwarding what its thread
  // left to it): they are kept with the runs that took the patch.
  const patchedIds = new Set(
    executions
      .filter((execution) => takesPatch(histories.get(execution.runId)!, prefix))
      .map((execution) => execution.workflowId),
  );
  const affected = (history: temporal.api.history.v1.IHistory) =>
    takesPatch(history, prefix) ||
    (history.events ?? []).some((event) =>
      patchedIds.has(
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
    // Beside the v1 ones, only the runs of the patch's new path: the rest replay as v1 does.
    if (!replace && !affected(history)) continue;
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
