// SPEC S11.1 through the real activities on the real Temporal dev server: a model (a real local HTTP
// server speaking OpenAI's protocol) is offered the tools of real MCP server processes, over stdio and
// streamable HTTP, and calls them as activities. A server that fails fails the tool call — the model
// reads the error and the turn goes on — never the turn or the workflow.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActivities } from '../../activities';
import { createMcpTools, type McpTools } from '../../activities/mcp-tools';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { startHttpMcpServer, stdioServer, type HttpMcpServer } from '../helpers/mcp-servers';
import {
  providerFor,
  startOpenAIServer,
  toolResultsOf,
  type ReceivedRequest,
  type Reply,
} from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let model: Awaited<ReturnType<typeof startOpenAIServer>>;
let web: HttpMcpServer;
let flaky: HttpMcpServer;
let mcp: McpTools;
let scratch: string;
let policy: (request: ReceivedRequest) => Reply = () => ({ text: 'unset' });
const warnings: string[] = [];
const taskQueue = uniqueTaskQueue('mcp-activities');
const notesFile = () => join(scratch, 'notes.txt');

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'agents-kit-mcp-activities-'));
  const env = { MCP_TEST_NOTES: notesFile() };
  [web, flaky, model] = await Promise.all([
    startHttpMcpServer({ env }),
    startHttpMcpServer({ env }),
    startOpenAIServer((request) => policy(request)),
  ]);
  mcp = createMcpTools(
    { files: stdioServer({ env }), web: { url: web.url }, flaky: { url: flaky.url } },
    { log: (message) => warnings.push(message) },
  );
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: createActivities({ model: providerFor(model.url), mcp }),
  });
});
afterAll(async () => {
  await temporal?.close();
  await mcp?.close();
  await Promise.all([web?.kill(), flaky?.kill(), model?.close()]);
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => model.requests.splice(0));

/** A model that makes `calls` one after another (one per model call), then answers with every result. */
const calling =
  (...calls: { name: string; input: unknown }[]) =>
  (request: ReceivedRequest): Reply => {
    const results = toolResultsOf(request);
    const next = calls[results.length];
    if (next) return { toolCalls: [next] };
    return { text: results.map((result) => `${result.name} said: ${result.content}`).join(' | ') };
  };

/** A root run whose model kernel runs one turn with `policy`; resolves with the turn's result. */
async function firstTurn(task: string): Promise<string | undefined> {
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task, name: 'root', kernel: { type: 'model' } },
  });
  const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  expect(first.status).toBe('completed');
  return first.result;
}

/** Waits until the test servers have started a slow call (they note it in the notes file). */
const slowStarted = (count: number) =>
  eventually(
    async () => (existsSync(notesFile()) ? readFileSync(notesFile(), 'utf8') : ''),
    (text) => text.split('\n').filter((line) => line.startsWith('slow started')).length >= count,
    'the MCP server to start the slow call',
    60_000,
  );
const slowCalls = () =>
  (existsSync(notesFile()) ? readFileSync(notesFile(), 'utf8') : '')
    .split('\n')
    .filter((line) => line.startsWith('slow started')).length;

test('the model is offered both servers’ tools with their JSON Schemas and calls one over stdio', async () => {
  policy = calling({ name: 'files__add', input: { a: 2, b: 3 } });
  expect(await firstTurn('add two and three')).toBe('files__add said: 5');
  const offered = Object.fromEntries(
    model.requests[0]!.body.tools!.map((tool) => [tool.function.name, tool.function]),
  );
  expect(Object.keys(offered)).toEqual(
    expect.arrayContaining(['spawn_agent', 'echo', 'files__add', 'files__echo', 'web__add', 'web__echo']),
  );
  expect(offered.files__add).toMatchObject({
    description: 'Adds two numbers.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  });
  // Every name the provider got is one it accepts.
  for (const name of Object.keys(offered)) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
});

test('a tool over streamable HTTP, and a tool’s own error read by the model as an error result', async () => {
  policy = calling(
    { name: 'web__echo', input: { text: 'hello over HTTP' } },
    { name: 'files__fail', input: {} },
  );
  expect(await firstTurn('echo, then fail')).toBe(
    'web__echo said: hello over HTTP | files__fail said: {"error":{"kind":"Integration","message":"MCP tool files__fail reported an error: the disk is on fire"}}',
  );
});

test('one turn reads each server’s tool list once, however many model calls it makes', async () => {
  policy = calling(
    { name: 'files__stats', input: {} },
    { name: 'files__add', input: { a: 1, b: 1 } },
    { name: 'files__stats', input: {} },
  );
  const result = (await firstTurn('count the lists'))!;
  const [before, , after] = [...result.matchAll(/said: (\{[^}]*\}|\d+)/g)].map((match) => match[1]!);
  expect(model.requests).toHaveLength(4);
  expect(JSON.parse(after!).listCalls).toBe(JSON.parse(before!).listCalls);
});

test('an HTTP server killed mid-call fails that call (once, not retried); the turn goes on', async () => {
  const already = slowCalls();
  policy = calling({ name: 'flaky__slow', input: { ms: 600_000 } });
  const turn = firstTurn('call the slow tool');
  await slowStarted(already + 1);
  await flaky.kill();
  expect(await turn).toMatch(
    /^flaky__slow said: \{"error":\{"kind":"Integration","message":"MCP server flaky went away while running tool slow \(it broke the connection .*\); it may have taken effect, so it is not retried"\}\}$/,
  );
  expect(slowCalls()).toBe(already + 1);
  // Later turns still run; the dead server's tools are what it listed last, and calling one says why.
  policy = calling({ name: 'flaky__add', input: { a: 1, b: 1 } });
  expect(await firstTurn('try the dead server')).toMatch(
    /^flaky__add said: \{"error":\{"kind":"Integration","message":"MCP server flaky \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached: .*ECONNREFUSED/,
  );
  expect(
    warnings.some((warning) => /MCP server flaky .*offering the tools it listed last/.test(warning)),
  ).toBe(true);
});

test('a stdio server killed mid-call fails that call; the next call starts the server again', async () => {
  const already = slowCalls();
  policy = calling({ name: 'files__pid', input: {} });
  const pid = Number((await firstTurn('which process'))!.replace('files__pid said: ', ''));
  policy = calling({ name: 'files__slow', input: { ms: 600_000 } }, { name: 'files__pid', input: {} });
  const turn = firstTurn('slow, then which process');
  await slowStarted(already + 1);
  process.kill(pid, 'SIGKILL');
  const result = (await turn)!;
  expect(result).toMatch(
    /^files__slow said: \{"error":\{"kind":"Integration","message":"MCP server files went away while running tool slow \(it was stopped by SIGKILL\); it may have taken effect, so it is not retried"\}\} \| files__pid said: \d+$/,
  );
  expect(Number(result.split('files__pid said: ')[1])).not.toBe(pid);
});

test('an interrupt cancels an MCP call in flight and leaves the thread idle', async () => {
  const already = slowCalls();
  policy = calling({ name: 'web__slow', input: { ms: 600_000 } });
  const service = await attachRun(temporal.client, taskQueue);
  const child = await service
    .rootControls()
    .spawn({ task: 'be slow', name: 'slowpoke', kernel: { type: 'model' } });
  await slowStarted(already + 1);
  expect(await service.rootControls().interrupt(child.id)).toMatchObject({ cancellationRequested: true });
  const thread = await untilTurns(service, child.id, 1);
  expect(thread.latestTurn?.status).toBe('interrupted');
  expect(thread.status).toBe('idle');
  await service.shutdown();
});
