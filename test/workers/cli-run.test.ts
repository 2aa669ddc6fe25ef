// The CLI's `run` command: argument bounds, approvals without a terminal, --yes, and the conversation
// lease it releases (the other commands are in cli.test.ts).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal as proto } from '@temporalio/proto';
import { runCli, startCli, untilOutput } from '../helpers/cli';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { slowTool } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cli-run');
const slow = slowTool();
let env: Record<string, string>;

beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: (await import('../../activities')).createActivities({ tools: [slow.tool] }),
  });
  env = { TEMPORAL_ADDRESS: temporal.address, AGENTS_KIT_TASK_QUEUE: taskQueue };
});
afterAll(async () => temporal?.close());

const parsed = <Value>(stdout: string): Value => JSON.parse(stdout) as Value;

test.each([
  [['run', 'task', '--max-depth', '-3'], 'run: --max-depth: must be ≥ 0'],
  [['run', 'task', '--max-depth', '65'], 'run: --max-depth: must be ≤ 64'],
  [['run', 'task', '--budget', '99999999999999999999'], 'run: --budget: must be ≤ 9007199254740991'],
  [['run', 'task', '--timeout', '0'], 'run: --timeout: must be ≥ 1'],
  [['watch', `conversation_${'0'.repeat(32)}`, '--limit', '-1'], 'watch: --limit: must be ≥ 1'],
  [['dev', '--port', '70000'], 'dev: --port: must be ≤ 65535'],
  [['run', 'task', '--max-depth', '1.5'], 'run: --max-depth: expected a whole number'],
])('%j: a number out of range names the flag and the bound', async (args, message) => {
  const result = await runCli(args, env);
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(`agents-kit: Protocol: ${message}\n`);
});

/** Writes a root kernel spec for `run --script`. */
function scriptFile(turns: unknown[][]): string {
  const file = join(process.env.AGENTS_KIT_TEST_DIR!, `cli-script-${randomUUID().slice(0, 8)}.json`);
  writeFileSync(file, JSON.stringify({ type: 'scripted', turns }));
  return file;
}

test('run without a terminal or --yes says approvals wait for resolve, and waits for the answer', async () => {
  const script = scriptFile([
    [
      { type: 'ask', kind: 'approval', prompt: 'Go ahead?' },
      { type: 'reply', text: 'root: {{last}}' },
    ],
  ]);
  const run = startCli(['run', 'ask first', '--script', script], env);
  const waiting =
    /waiting for an answer: agents-kit resolve (thread_[0-9a-f]{32}) (request_[0-9a-f]{32}) --approve\|--deny \(with AGENTS_KIT_CAPABILITY=([0-9a-f]{64})\)/;
  await untilOutput(run, waiting);
  expect(run.output().stderr).toContain(
    'approvals: no terminal — each will wait for `agents-kit resolve <threadId> <requestId> --approve|--deny` (or pass --yes to approve automatically)',
  );
  expect(run.output().stderr).not.toMatch(/approved automatically/);
  const [, threadId, requestId, capability] = waiting.exec(run.output().stderr)!;
  const resolved = await runCli(['resolve', threadId!, requestId!, '--approve'], {
    ...env,
    AGENTS_KIT_CAPABILITY: capability!,
  });
  expect(resolved.code).toBe(0);
  const result = await run.done;
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^root: root: approved$/m);
});

test("run --yes keeps streaming until the tree is idle: a child's approval after the root's first turn is shown and answered", async () => {
  const checks = [
    { type: 'tool', tool: 'slow', input: { ms: 1_500, label: `checker-${randomUUID()}` } },
    { type: 'ask', kind: 'approval', prompt: 'Publish the check?' },
    { type: 'reply', text: 'checker: {{last}}' },
  ];
  const request = { name: 'checker', task: 'check later', kernel: { type: 'scripted', turns: [checks] } };
  const script = scriptFile([
    [
      { type: 'spawn', as: 'checker', request },
      { type: 'reply', text: 'root: spawned the checker' },
    ],
  ]);
  const result = await runCli(['run', 'check later', '--script', script, '--yes'], env);
  expect(result.code).toBe(0);
  expect(result.stderr).toContain('approvals: approved automatically (--yes)');
  const checker = /^ {2}\/root\/checker +idle +turns 1\/1 +(thread_[0-9a-f]{32}) +checker: approved$/m.exec(
    result.stdout,
  );
  expect(checker).not.toBeNull();
  const approval = result.stderr.search(
    new RegExp(`approval request_[0-9a-f]{32} from ${checker![1]}: Publish the check\\?`),
  );
  const approved = result.stderr.search(/^agents-kit: approved automatically \(--yes\)$/m);
  expect(approval).toBeGreaterThan(-1);
  expect(approved).toBeGreaterThan(approval);
  expect(result.stderr.indexOf('run completed')).toBeGreaterThan(approved);
  expect(result.stdout).toMatch(/^root: root: spawned the checker$/m);
});

test('run releases the root conversation when it ends: watch takes it and starts where run stopped', async () => {
  const run = await runCli(['run', 'then watch', '--agents', 'solo', '--keep', '--json'], env);
  expect(run.code).toBe(0);
  const seen = [...run.stderr.matchAll(/^agents-kit: #(\d+) /gm)].map((match) => Number(match[1]));
  expect(seen.length).toBeGreaterThan(1);
  const { rootThreadId, root, capability } = parsed<{
    rootThreadId: string;
    root: { conversationId: string };
    capability: string;
  }>(run.stdout);
  const watched = await runCli(['watch', root.conversationId, '--json', '--idle-exit', '2500'], {
    ...env,
    AGENTS_KIT_CAPABILITY: capability,
  });
  expect(watched.stderr).toBe('');
  expect(watched.code).toBe(0);
  const items = watched.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { seq: number });
  // Run acknowledged every item but its last (passive items are acknowledged by receiving the next).
  expect(items[0]!.seq).toBe(Math.max(...seen));
  expect((await runCli(['shutdown', rootThreadId], { ...env, AGENTS_KIT_CAPABILITY: capability })).code).toBe(
    0,
  );
});

test('watch of a conversation id that names nothing is NotFound, and starts no conversation', async () => {
  const hex = randomUUID().replace(/-/g, '');
  const watched = await runCli(['watch', `conversation_${hex}`, '--idle-exit', '2000'], env);
  expect([watched.code, watched.stderr.trim()]).toEqual([
    1,
    `agents-kit: NotFound: watch: no conversation conversation_${hex}, and no thread thread_${hex} it would belong to: check the id`,
  ]);
  await expect(temporal.client.workflow.getHandle(`conversation_${hex}`).describe()).rejects.toThrow(
    /not found/i,
  );
});

test('run on a task queue no worker polls says so and leaves no run behind', async () => {
  const nobody = uniqueTaskQueue('cli-run-nobody');
  const started = Date.now();
  const result = await runCli(['run', 'anyone there?', '--task-queue', nobody], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    `agents-kit: Integration: no worker polls task queue ${nobody} (none took the root's first task in 5 s)`,
  );
  // It looked for the grace period, not the 30 s of a query nobody answers.
  expect(Date.now() - started).toBeLessThan(25_000);
  const { executions } = await temporal.client.workflowService.listWorkflowExecutions({
    namespace: 'default',
    query: `TaskQueue = '${nobody}'`,
  });
  expect(executions?.map((execution) => execution.status)).toEqual([
    proto.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED,
  ]);
});
