// SPEC S11.1 end to end: an agent tree on the real Temporal dev server whose agents use the tools of a
// real MCP server process, under the same allow-list intersection (S4.1) and approval rules (S6.1) as
// every other tool.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { resolveNotification } from '../../client/conversations';
import { createActivities } from '../../activities';
import { createMcpTools, type McpTools } from '../../activities/mcp-tools';
import type { ConversationNotification } from '../../domain/schemas';
import type { ThreadService } from '../../client/thread-service';
import { attachRun, untilTurns } from '../helpers/runs';
import { stdioServer } from '../helpers/mcp-servers';
import {
  providerFor,
  startOpenAIServer,
  systemOf,
  toolResultsOf,
  type ReceivedRequest,
  type Reply,
} from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let model: Awaited<ReturnType<typeof startOpenAIServer>>;
let mcp: McpTools;
let scratch: string;
let policy: (request: ReceivedRequest) => Reply = () => ({ text: 'unset' });
const taskQueue = uniqueTaskQueue('mcp-tools');
const notes = () => {
  const path = join(scratch, 'notes.txt');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
};

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'agents-kit-mcp-tools-'));
  model = await startOpenAIServer((request) => policy(request));
  // `vault` asks a person before its `remember` runs; `files` never asks.
  const env = { MCP_TEST_NOTES: join(scratch, 'notes.txt') };
  mcp = createMcpTools({
    files: stdioServer({ env }),
    vault: stdioServer({ env, approvalTools: ['remember'] }),
  });
  temporal = await connectTestTemporal();
  await temporal.startWorker({
    taskQueue,
    activities: createActivities({ model: providerFor(model.url), mcp }),
  });
});
afterAll(async () => {
  await temporal?.close();
  await mcp?.close();
  await model?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => model.requests.splice(0));

const offeredTo = (path: string) =>
  model.requests
    .find((request) => systemOf(request).includes(`agent ${path} `))!
    .body.tools!.map((tool) => tool.function.name);
const answer = (request: ReceivedRequest): Reply => ({
  text: toolResultsOf(request)
    .map((result) => `${result.name}: ${result.content}`)
    .join(' | '),
});

async function nextInteraction(
  receiver: ConversationNotificationReceiver,
): Promise<ConversationNotification> {
  for (;;) {
    const item = await receiver.recv();
    if (!item) throw new Error('the conversation ended before an interaction arrived');
    if (item.body.type === 'interaction') return item;
  }
}

/** A root whose model wants `vault__remember` once, then reports what the call answered. */
async function rememberingRoot(
  note: string,
): Promise<{ service: ThreadService; interaction: ConversationNotification }> {
  policy = (request) =>
    toolResultsOf(request).length === 0
      ? { toolCalls: [{ name: 'vault__remember', input: { note } }] }
      : answer(request);
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task: `remember ${note}`, name: 'root', kernel: { type: 'model' } },
  });
  await using receiver = await ConversationNotificationReceiver.open(
    temporal.client,
    (await service.refreshRoot()).conversationId,
    { taskQueue, capability: service.rootCapability },
  );
  return { service, interaction: await nextInteraction(receiver) };
}

test('a root delegates to a sub-agent that may use one MCP tool: it is offered that one and calls it', async () => {
  policy = (request) => {
    const system = systemOf(request);
    const results = toolResultsOf(request);
    if (system.includes('agent /root/calc ')) {
      return results.length === 0
        ? { toolCalls: [{ name: 'files__add', input: { a: 19, b: 23 } }] }
        : answer(request);
    }
    const spawned = results.find((result) => result.name === 'spawn_agent');
    if (!spawned)
      return {
        toolCalls: [
          { name: 'spawn_agent', input: { name: 'calc', task: 'add 19 and 23', tools: ['files__add'] } },
        ],
      };
    const waited = results.find((result) => result.name === 'wait_agents');
    if (!waited || !waited.content.includes('files__add'))
      return {
        toolCalls: [
          {
            name: 'wait_agents',
            input: { ids: [(JSON.parse(spawned.content) as { id: string }).id], timeout_ms: 30_000 },
          },
        ],
      };
    return {
      text: `calc reported: ${(JSON.parse(waited.content) as { outcomes: { result: string }[] }).outcomes[0]!.result}`,
    };
  };
  const service = await attachRun(temporal.client, taskQueue, {
    root: { task: 'what is 19 + 23?', name: 'root', kernel: { type: 'model' } },
  });
  const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  expect(first.result).toBe('calc reported: files__add: 42');
  // The root (tools `*`) is offered every MCP tool; the child only the one its allow-list names.
  expect(offeredTo('/root')).toEqual(
    expect.arrayContaining(['files__add', 'files__echo', 'vault__remember']),
  );
  const childTools = offeredTo('/root/calc');
  expect(childTools).toContain('files__add');
  expect(childTools.filter((name) => name.includes('__'))).toEqual(['files__add']);
  await service.shutdown();
});

test('a tool outside the allow-list is refused: not offered, and not run when called anyway', async () => {
  policy = (request) =>
    toolResultsOf(request).length === 0
      ? { toolCalls: [{ name: 'files__echo', input: { text: 'sneaky' } }] }
      : answer(request);
  const service = await attachRun(temporal.client, taskQueue);
  const limited = await service.rootControls().spawn({
    task: 'try a tool you do not have',
    name: 'limited',
    tools: ['files__add'],
    kernel: { type: 'model' },
  });
  expect((await untilTurns(service, limited.id, 1)).latestTurn?.result).toBe(
    'files__echo: {"error":{"kind":"PermissionDenied","message":"tool files__echo is not in the allow-list of /root/limited"}}',
  );
  expect(offeredTo('/root/limited')).not.toContain('files__echo');
  // A scripted kernel passes the same gate (the workflow checks before any activity runs).
  const scripted = await service.rootControls().spawn({
    task: 'scripted',
    name: 'scripted',
    tools: ['files__add'],
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'tool', tool: 'files__echo', input: { text: 'x' } },
          { type: 'reply', text: 'ran' },
        ],
      ],
    },
  });
  expect((await untilTurns(service, scripted.id, 1)).latestTurn).toMatchObject({
    status: 'failed',
    error: {
      kind: 'PermissionDenied',
      message: 'tool files__echo is not in the allow-list of /root/scripted',
    },
  });
  const allowed = await service.rootControls().spawn({
    task: 'scripted',
    name: 'allowed',
    tools: ['files__add'],
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'tool', tool: 'files__add', input: { a: 1, b: 2 } },
          { type: 'reply', text: 'sum {{last}}' },
        ],
      ],
    },
  });
  expect((await untilTurns(service, allowed.id, 1)).latestTurn?.result).toBe('sum 3');
  await service.shutdown();
});

test('an MCP tool that needs approval waits for a person: approved, it runs', async () => {
  const { service, interaction } = await rememberingRoot('ship it');
  expect(interaction.body).toMatchObject({
    kind: 'approval',
    tool: { name: 'vault__remember', input: { note: 'ship it' } },
  });
  // Nothing ran while it waited.
  expect(notes()).not.toContain('ship it');
  await resolveNotification(
    temporal.client,
    interaction,
    { type: 'approval', approved: true },
    {
      capability: service.rootCapability,
    },
  );
  const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  expect(first.result).toBe('vault__remember: noted: ship it');
  expect(notes()).toContain('ship it\n');
});

test('an MCP tool that needs approval, denied, never runs; the model reads the denial', async () => {
  const { service, interaction } = await rememberingRoot('delete prod');
  await resolveNotification(
    temporal.client,
    interaction,
    { type: 'approval', approved: false, reason: 'not today' },
    { capability: service.rootCapability },
  );
  const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
  expect(first.result).toMatch(/^vault__remember: .*a person denied this call: not today/);
  expect(notes()).not.toContain('delete prod');
});
