// SPEC S11.4, S8.2: `agents-kit policy` prints and changes a live run's approval policy, and
// `agents-kit resolve --approve --remember` allows a tool for the rest of the run.
import { RootInbox, scripted } from '../helpers/approvals';
import { runCli } from '../helpers/cli';
import { attachRun, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cli-policy');
let env: Record<string, string>;
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
  env = { TEMPORAL_ADDRESS: temporal.address, AGENTS_KIT_TASK_QUEUE: taskQueue };
});
afterAll(async () => temporal?.close());

const publish = (title: string) => ({ type: 'tool' as const, tool: 'publish', input: { title } });

test('policy prints and changes the policy; a change releases a waiting approval; resolve --remember remembers', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootThreadId;
  const withKey = { ...env, AGENTS_KIT_CAPABILITY: service.capability };
  const refused = await runCli(['policy', root], env);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^agents-kit: PermissionDenied: acting on root .* needs its capability/);
  const shown = await runCli(['policy', root, '--json'], withKey);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout)).toEqual({
    rootThreadId: root,
    version: 0,
    neverAsk: [],
    alwaysAsk: [],
    remembered: [],
  });

  const inbox = await RootInbox.open(temporal.client, service, taskQueue);
  const waiting = await service.rootControls().spawn({ task: 'publish', kernel: scripted([publish('cli')]) });
  await inbox.interaction(waiting.id);
  const changed = await runCli(['policy', root, '--never-ask', 'publish, word_count'], withKey);
  expect(changed.code).toBe(0);
  expect(changed.stdout.split('\n')).toEqual([
    `approval policy of ${root} (version 1)`,
    '  never ask:   publish, word_count',
    '  always ask:  (none)',
    '  remembered:  (none)',
    '',
  ]);
  expect((await untilTurns(service, waiting.id, 1)).latestTurn?.result).toBe('published "cli"');

  // Bad lists and flags: one Protocol line, exit 1, nothing changed.
  const bad = await runCli(['policy', root, '--always-ask', 'no spaces allowed'], withKey);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/^agents-kit: Protocol: invalid approval policy change: alwaysAsk\.0: /m);
  const cleared = await runCli(['policy', root, '--never-ask', '', '--json'], withKey);
  expect(JSON.parse(cleared.stdout)).toMatchObject({ version: 2, neverAsk: [] });

  const asker = await service.rootControls().spawn({ task: 'publish', kernel: scripted([publish('again')]) });
  const call = await inbox.interaction(asker.id);
  const lonely = await runCli(['resolve', asker.id, call.body.requestId, '--deny', '--remember'], withKey);
  expect(lonely.code).toBe(1);
  expect(lonely.stderr).toMatch(/Protocol: resolve: --remember goes with --approve/);
  const remembered = await runCli(
    ['resolve', asker.id, call.body.requestId, '--approve', '--remember'],
    withKey,
  );
  expect(remembered.code).toBe(0);
  expect(remembered.stdout).toContain('"remember":true');
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('published "again"');
  const after = await runCli(['policy', root], withKey);
  expect(after.stdout).toContain('  remembered:  publish');
  const forgotten = await runCli(['policy', root, '--forget', '--json'], withKey);
  expect(JSON.parse(forgotten.stdout)).toMatchObject({ version: 4, remembered: [] });
  await inbox.close();
}, 180_000);
