// SPEC S11.1, S8.3: the `agents-kit worker` process reads its MCP servers from AGENTS_KIT_MCP_SERVERS,
// refuses a bad entry before it connects, and stops its stdio servers when it shuts down.
import { runCli, startCli, untilOutput } from '../helpers/cli';
import { isAlive, stdioServer } from '../helpers/mcp-servers';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';

let temporal: TestTemporal;
beforeAll(async () => {
  temporal = await connectTestTemporal();
});
afterAll(async () => {
  await temporal?.close();
});

test('a worker runs an agent’s MCP tool call and stops the server when it shuts down', async () => {
  const queue = uniqueTaskQueue('mcp-worker');
  const worker = startCli(['worker', '--workflow-bundle', workflowBundlePath()], {
    TEMPORAL_ADDRESS: temporal.address,
    AGENTS_KIT_TASK_QUEUE: queue,
    AGENTS_KIT_MCP_SERVERS: JSON.stringify({ files: stdioServer() }),
  });
  let pid: number;
  try {
    await untilOutput(worker, new RegExp(`worker polling task queue ${queue}`));
    const service = await attachRun(temporal.client, queue, {
      root: {
        task: 'which process serves files',
        name: 'root',
        kernel: {
          type: 'scripted',
          turns: [
            [
              { type: 'tool', tool: 'files__pid' },
              { type: 'reply', text: '{{last}}' },
            ],
          ],
        },
      },
    });
    const root = await untilTurns(service, service.rootThreadId, 1);
    pid = Number(root.latestTurn?.result);
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(true);
    await service.complete();
  } finally {
    worker.kill('SIGTERM');
  }
  expect((await worker.done).code).toBe(0);
  await eventually(
    async () => isAlive(pid),
    (alive) => !alive,
    'the MCP server to be stopped',
    30_000,
  );
});

test('a bad AGENTS_KIT_MCP_SERVERS stops the worker at start-up, naming the field', async () => {
  const result = await runCli(['worker'], {
    TEMPORAL_ADDRESS: temporal.address,
    AGENTS_KIT_MCP_SERVERS: JSON.stringify({ files: { command: 'x', cwd: '/nonexistent/dir' } }),
  });
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/Protocol: invalid AGENTS_KIT_MCP_SERVERS: files\.cwd: no such directory/);
});
