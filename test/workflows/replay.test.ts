// SPEC S7.4: the golden histories recorded by scripts/record-histories.ts replay against today's
// workflow code without non-determinism, and a deliberately non-deterministic change is caught.
import { quietLogger } from '../helpers/quiet-logger';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import * as workflowTypes from '../../workflows';
import { DeterminismViolationError } from '@temporalio/workflow';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dataDir, projectRoot } from '../helpers/paths';
import { historyFromFixture, type HistoryFixture } from '../helpers/histories';
import { workflowBundlePath } from '../helpers/temporal';

const fixturesDir = join(projectRoot, 'test', 'fixtures', 'histories');
const fixtures = readdirSync(fixturesDir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    ...(JSON.parse(readFileSync(join(fixturesDir, file), 'utf8')) as HistoryFixture),
  }));

test('the fixtures cover every workflow type, continue-as-new included', () => {
  const types = new Set(fixtures.map((fixture) => fixture.workflowType));
  expect(types).toEqual(new Set(Object.keys(workflowTypes)));
  // A page workflow hands its entries back and completes; every other type continues as new.
  for (const type of [...types].filter((name) => name !== 'conversationPageWorkflow')) {
    expect(
      fixtures.some((fixture) => fixture.workflowType === type && /continued_as_new/.test(fixture.file)),
    ).toBe(true);
  }
});

test('the fixtures hold accepted and failed updates, an interrupted activity, an answered interaction and live output', () => {
  const texts = fixtures.map((fixture) => JSON.stringify(fixture.history));
  const holding = (needle: string) => texts.filter((text) => text.includes(needle)).length;
  expect(holding('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED')).toBeGreaterThan(0);
  // An update accepted by its validator whose handler then failed it (Conflict, PermissionDenied, Closed).
  expect(texts.some((text) => /UPDATE_COMPLETED[\s\S]*"failure"/.test(text))).toBe(true);
  expect(holding('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED')).toBeGreaterThan(0);
  expect(holding('resolve-interaction')).toBeGreaterThan(0);
  // Live output (SPEC S10.1; `scripts/record-histories.ts --live`): streamed chunks and long-poll watches.
  expect(holding('"signalName":"live-output"')).toBeGreaterThan(0);
  expect(holding('"name":"watch-output"')).toBeGreaterThan(0);
});

// A worker without tracing loads the bundle built without the tracing interceptors (dist/, built by the
// jest set-up); a tree moves between traced and untraced workers, so both replay every history.
test.each([
  ['with the tracing interceptors', () => workflowBundlePath()],
  ['without them (an untraced worker)', () => join(projectRoot, 'dist', 'workflow-bundle-untraced.js')],
])(
  'every recorded history replays without non-determinism (S7.4), %s',
  async (_, bundle) => {
    const results = Worker.runReplayHistories(
      { workflowBundle: { codePath: bundle() } },
      fixtures.map((fixture) => ({
        workflowId: fixture.workflowId,
        history: historyFromFixture(fixture.history),
      })),
    );
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of results) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(fixtures.length);
    // 248 histories (11 MB): ~20 s on a quiet machine, 60 s and more beside another suite in CI.
  },
  300_000,
);

test('a workflow that issues a different first command is caught as a DeterminismViolationError', async () => {
  // A copy of the workflows entry whose root run sleeps before doing anything else: the recorded
  // history's first command (starting the root's conversation) no longer matches.
  const entryDir = join(dataDir, `nondeterministic-${process.pid}`);
  mkdirSync(entryDir, { recursive: true });
  const workflows = resolve(projectRoot, 'workflows');
  writeFileSync(
    join(entryDir, 'index.ts'),
    [
      `import { sleep } from '@temporalio/workflow';`,
      `import { rootRunWorkflow as original } from ${JSON.stringify(join(workflows, 'root-run-workflow'))};`,
      `export { agentWorkflow } from ${JSON.stringify(join(workflows, 'agent-workflow'))};`,
      `export { conversationWorkflow } from ${JSON.stringify(join(workflows, 'conversation-workflow'))};`,
      `export async function rootRunWorkflow(input: Parameters<typeof original>[0]) {`,
      `  await sleep(1);`,
      `  return original(input);`,
      `}`,
      '',
    ].join('\n'),
  );
  try {
    const bundle = await bundleWorkflowCode({
      workflowsPath: join(entryDir, 'index.ts'),
      logger: quietLogger,
    });
    const root = fixtures.find((fixture) => fixture.workflowType === 'rootRunWorkflow')!;
    const replay = Worker.runReplayHistory(
      { workflowBundle: bundle },
      historyFromFixture(root.history),
      root.workflowId,
    );
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
    // The unchanged code replays the same history cleanly: the failure is the change, not the file.
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: workflowBundlePath() } },
      historyFromFixture(root.history),
      root.workflowId,
    );
  } finally {
    rmSync(entryDir, { recursive: true, force: true });
  }
});
