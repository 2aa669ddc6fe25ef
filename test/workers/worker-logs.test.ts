// A worker's log as a log collector reads it. With AGENTS_KIT_LOG_FORMAT=json every line `agents-kit
// worker` writes to stderr — its own notes, Temporal's worker log, the SDK's native side — is one JSON
// object with time, level and message, at AGENTS_KIT_LOG_LEVEL. In the default text format the native
// side's lines come through the same logger too: no terminal colour codes in a log file.
import { startCli, untilOutput, type CliProcess } from '../helpers/cli';
import { attachRun, untilTurns } from '../helpers/runs';
import { suiteTemporal, uniqueTaskQueue, workflowBundlePath } from '../helpers/temporal';
import { writeJsonLog } from '../../workers/worker-logs';

const temporal = suiteTemporal();

/** Runs `agents-kit worker` with `env` through one scripted root turn, then SIGTERM; its stderr. */
async function workerLog(env: Record<string, string>): Promise<string> {
  const taskQueue = uniqueTaskQueue('logs');
  const worker: CliProcess = startCli(['worker', '--workflow-bundle', workflowBundlePath()], {
    TEMPORAL_ADDRESS: temporal().address,
    AGENTS_KIT_TASK_QUEUE: taskQueue,
    ...env,
  });
  try {
    await untilOutput(worker, new RegExp(`worker polling task queue ${taskQueue}`));
    const service = await attachRun(temporal().client, taskQueue, { root: { task: 'answer', name: 'root' } });
    await untilTurns(service, service.rootThreadId, 1);
    await service.shutdown();
  } finally {
    worker.kill('SIGTERM');
  }
  const exit = await worker.done;
  expect(exit.code).toBe(0);
  return exit.stderr;
}

test('AGENTS_KIT_LOG_FORMAT=json: every line is a JSON entry with time, level and message', async () => {
  const log = await workerLog({ AGENTS_KIT_LOG_FORMAT: 'json', AGENTS_KIT_LOG_LEVEL: 'INFO' });
  const lines = log.trim().split('\n');
  const entries = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });
  for (const entry of entries) {
    expect(entry).toMatchObject({
      time: expect.any(String),
      level: expect.any(String),
      message: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(entry.time as string))).toBe(false);
    expect(['TRACE', 'DEBUG']).not.toContain(entry.level);
  }
  const messages = entries.map((entry) => entry.message);
  // Its own notes, and Temporal's worker log with its metadata.
  expect(messages).toEqual(expect.arrayContaining(['worker stopped', expect.stringMatching(/^stopping: /)]));
  expect(entries).toContainEqual(
    expect.objectContaining({ level: 'INFO', message: 'Worker state changed', state: 'RUNNING' }),
  );
  // The SDK's native side, forwarded: without that it would print its own (coloured) lines.
  expect(entries).toContainEqual(
    expect.objectContaining({ level: 'INFO', message: 'Initializing worker', sdkComponent: 'core' }),
  );
});

test("the default text log carries the SDK's native lines too, without terminal colour codes", async () => {
  const log = await workerLog({ AGENTS_KIT_LOG_LEVEL: 'INFO' });
  expect(log).toMatch(/\[INFO\] Initializing worker/);
  expect(log).not.toContain('\u001b[');
  expect(log).toContain('agents-kit: worker stopped');
});

test('a JSON entry survives what log metadata holds: errors, bigints, an object met twice', () => {
  const written: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    writeJsonLog({
      level: 'WARN',
      message: 'Activity failed',
      timestampNanos: 1_765_000_000_000_000_000n,
      meta: { error: new TypeError('bad tool'), attempt: 2n, loop },
    });
  } finally {
    write.mockRestore();
  }
  expect(written).toHaveLength(1);
  expect(JSON.parse(written[0]!)).toMatchObject({
    time: new Date(1_765_000_000_000).toISOString(),
    level: 'WARN',
    message: 'Activity failed',
    error: { name: 'TypeError', message: 'bad tool', stack: expect.stringContaining('bad tool') },
    attempt: '2',
    loop: { name: 'loop', self: '[circular]' },
  });
});
