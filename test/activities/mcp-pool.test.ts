// SPEC S11.1: a worker's MCP servers behind one pool — real server processes (the official SDK) over
// stdio and streamable HTTP: connections shared and reopened, lists read once per turn, servers stopped
// at close, and every failure a KitError that says which server, what happened and whether to retry.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorKind, KitError } from '../../domain/errors';
import { createMcpTools, type McpTools } from '../../activities/mcp-tools';
import { eventually, kitErrorOf } from '../helpers/runs';
import { isAlive, startHttpMcpServer, stdioServer, type HttpMcpServer } from '../helpers/mcp-servers';

const signal = new AbortController().signal;
let scratch: string;
const open: McpTools[] = [];
const servers: HttpMcpServer[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'agents-kit-mcp-pool-'));
});
afterAll(async () => {
  await Promise.all(open.map((tools) => tools.close()));
  await Promise.all(servers.map((server) => server.kill()));
  rmSync(scratch, { recursive: true, force: true });
});

/** MCP tools closed after the suite, whatever a test left open. */
function tools(...args: Parameters<typeof createMcpTools>): McpTools {
  const created = createMcpTools(...args);
  open.push(created);
  return created;
}

async function http(options: Parameters<typeof startHttpMcpServer>[0] = {}): Promise<HttpMcpServer> {
  const server = await startHttpMcpServer(options);
  servers.push(server);
  return server;
}

const run = (mcp: McpTools, name: string, input: unknown = {}, threadId = 'thread-a') =>
  mcp.run({ threadId, name, input }, signal);
const statsOf = async (mcp: McpTools, name: string, threadId = 'thread-a') =>
  JSON.parse(await run(mcp, name, {}, threadId)) as { listCalls: number; toolCalls: number };

/** A notes file the server writes to, and a wait until the server has started a slow call. */
function notes(label: string) {
  const path = join(scratch, `${label}.txt`);
  return {
    path,
    started: () =>
      eventually(
        async () => (existsSync(path) ? readFileSync(path, 'utf8') : ''),
        (text) => text.includes('slow started'),
        `the ${label} server to start the slow call`,
        60_000,
      ),
  };
}

describe('stdio', () => {
  test('one process serves every call, concurrent ones too', async () => {
    const mcp = tools({ files: stdioServer() });
    const first = await run(mcp, 'files__pid');
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => run(mcp, 'files__pid')));
    expect(new Set([first, ...concurrent])).toEqual(new Set([first]));
    expect(await run(mcp, 'files__add', { a: 2, b: 40 })).toBe('42');
  });

  test('a tool list is read once per turn of a thread, however many calls the turn makes', async () => {
    const mcp = tools({ files: stdioServer() });
    const site = { threadId: 'thread-a', turn: 1 };
    const offered = await mcp.offered(site, () => true, signal);
    expect(offered.map((tool) => tool.name)).toEqual(expect.arrayContaining(['files__add', 'files__stats']));
    await mcp.offered(site, () => true, signal);
    await run(mcp, 'files__add', { a: 1, b: 1 });
    await mcp.offered(site, () => true, signal);
    expect((await statsOf(mcp, 'files__stats')).listCalls).toBe(1);
    // The next turn reads it again; so does another thread's turn.
    await mcp.offered({ threadId: 'thread-a', turn: 2 }, () => true, signal);
    await mcp.offered({ threadId: 'thread-b', turn: 1 }, () => true, signal);
    expect((await statsOf(mcp, 'files__stats')).listCalls).toBe(3);
  });

  test('the allow-list decides what is offered', async () => {
    const mcp = tools({ files: stdioServer() });
    const offered = await mcp.offered(
      { threadId: 'thread-a', turn: 1 },
      (name) => name === 'files__add',
      signal,
    );
    expect(offered.map((tool) => tool.name)).toEqual(['files__add']);
  });

  test('approval comes from the server’s needsApproval or its approvalTools', async () => {
    const mcp = tools({
      files: stdioServer({ approvalTools: ['remember'] }),
      vault: stdioServer({ needsApproval: true }),
    });
    const offered = await mcp.offered({ threadId: 'thread-a', turn: 1 }, () => true, signal);
    const approval = Object.fromEntries(offered.map((tool) => [tool.name, tool.needsApproval]));
    expect(approval).toMatchObject({
      files__remember: true,
      files__add: false,
      vault__add: true,
      vault__echo: true,
    });
  });

  test('a server killed mid-call fails that call (not retried); the next call starts it again', async () => {
    const log = notes('stdio-kill');
    const mcp = tools({ files: stdioServer({ env: { MCP_TEST_NOTES: log.path } }) });
    const pid = Number(await run(mcp, 'files__pid'));
    const call = kitErrorOf(run(mcp, 'files__slow', { ms: 600_000 }));
    await log.started();
    process.kill(pid, 'SIGKILL');
    const error = await call;
    expect(error.kind).toBe(ErrorKind.Integration);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(
      /^MCP server files went away while running tool slow \(it was stopped by SIGKILL\); it may have taken effect, so it is not retried$/,
    );
    const again = Number(await run(mcp, 'files__pid'));
    expect(again).not.toBe(pid);
    expect(await run(mcp, 'files__add', { a: 1, b: 2 })).toBe('3');
  });

  test('a server that cannot start says why, with the end of its stderr', async () => {
    const mcp = tools({ broken: stdioServer({ env: { MCP_TEST_CRASH: 'cannot read config.json' } }) });
    const error = await kitErrorOf(run(mcp, 'broken__add', { a: 1, b: 1 }));
    expect(error.kind).toBe(ErrorKind.Integration);
    expect(error.message).toMatch(/MCP server broken .* could not be reached: it exited with code 3/);
    expect(error.message).toMatch(/its stderr ended with: cannot read config\.json/);
    // A command that does not exist is a configuration error: retrying cannot help.
    const missing = await kitErrorOf(run(tools({ gone: { command: '/nonexistent/mcp-server' } }), 'gone__x'));
    expect(missing.kind).toBe(ErrorKind.Protocol);
    expect(missing.retryable).toBe(false);
    expect(missing.message).toMatch(/cannot start "\/nonexistent\/mcp-server" \(ENOENT\)/);
  });

  test('a server that writes a line past the bound is stopped, with a reason', async () => {
    const flood = `process.stdout.write('x'.repeat(17 * 1024 * 1024)); setInterval(() => {}, 1000);`;
    const mcp = tools({
      flood: { command: process.execPath, args: ['-e', flood], connectTimeoutMs: 60_000 },
    });
    const error = await kitErrorOf(run(mcp, 'flood__add'));
    expect(error.message).toMatch(
      /^MCP server flood .* could not be reached: it sent a line over 16777216 bytes: stopped$/,
    );
  });

  test('close() stops the server processes; later calls fail with Closed', async () => {
    const mcp = createMcpTools({ files: stdioServer() });
    const pid = Number(await run(mcp, 'files__pid'));
    expect(isAlive(pid)).toBe(true);
    await mcp.close();
    expect(isAlive(pid)).toBe(false);
    expect((await kitErrorOf(run(mcp, 'files__add', { a: 1, b: 1 }))).kind).toBe(ErrorKind.Closed);
  });
});

describe('streamable HTTP', () => {
  test('calls share one session; headers reach the server; wrong credentials are PermissionDenied', async () => {
    const server = await http({ env: { MCP_TEST_TOKEN: 'open-sesame' } });
    const mcp = tools({
      web: { url: server.url, headers: { Authorization: 'Bearer open-sesame' } },
      locked: { url: server.url },
    });
    const pids = await Promise.all(Array.from({ length: 4 }, () => run(mcp, 'web__pid')));
    expect(new Set(pids)).toEqual(new Set([String(server.pid)]));
    expect(await run(mcp, 'web__echo', { text: 'over HTTP' })).toBe('over HTTP');
    const denied = await kitErrorOf(run(mcp, 'locked__echo', { text: 'x' }));
    expect(denied.kind).toBe(ErrorKind.PermissionDenied);
    expect(denied.message).toMatch(
      /refused the credentials \(HTTP 401\) while connecting: check its headers/,
    );
    expect(denied.message).not.toMatch(/sesame/);
  });

  test('a server killed mid-call fails that call; once it is back, the next call opens a new session', async () => {
    const log = notes('http-kill');
    const server = await http({ env: { MCP_TEST_NOTES: log.path } });
    const mcp = tools({ web: { url: server.url, connectTimeoutMs: 60_000 } });
    expect(await run(mcp, 'web__add', { a: 1, b: 1 })).toBe('2');
    const call = kitErrorOf(run(mcp, 'web__slow', { ms: 600_000 }));
    await log.started();
    await server.kill();
    const error = await call;
    expect(error.kind).toBe(ErrorKind.Integration);
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(
      /^MCP server web went away while running tool slow \(it broke the connection/,
    );
    // Down: a retryable failure (nothing reached the server).
    const down = await kitErrorOf(run(mcp, 'web__add', { a: 1, b: 1 }));
    expect(down.kind).toBe(ErrorKind.Integration);
    expect(down.retryable).toBe(true);
    expect(down.message).toMatch(/could not be reached: .*ECONNREFUSED/);
    const back = await http({ port: server.port });
    expect(await run(mcp, 'web__pid')).toBe(String(back.pid));
  });

  test('a URL with no MCP endpoint is a configuration error naming the url', async () => {
    const server = await http();
    const error = await kitErrorOf(
      run(tools({ web: { url: server.url.replace('/mcp', '/nothing') } }), 'web__x'),
    );
    expect(error.kind).toBe(ErrorKind.Protocol);
    expect(error.message).toMatch(
      /no streamable HTTP MCP endpoint at http:\/\/127\.0\.0\.1:\d+\/nothing .*check its url/,
    );
  });
});

describe('failures of one call', () => {
  test('a tool’s own error, a slow answer, bad input and an unknown tool each fail the call, clearly', async () => {
    const mcp = tools({ files: stdioServer({ timeoutMs: 1000 }) });
    const failed = await kitErrorOf(run(mcp, 'files__fail'));
    expect(failed).toBeInstanceOf(KitError);
    expect(failed.message).toBe('MCP tool files__fail reported an error: the disk is on fire');
    expect(failed.retryable).toBe(false);
    const slow = await kitErrorOf(run(mcp, 'files__slow', { ms: 60_000 }));
    expect(slow.kind).toBe(ErrorKind.Timeout);
    expect(slow.retryable).toBe(false);
    expect(slow.message).toBe(
      'MCP server files did not answer running tool slow within 1000 ms (timeoutMs); it may have taken effect, so it is not retried',
    );
    const invalid = await kitErrorOf(run(mcp, 'files__add', { a: 'two' }));
    expect(invalid.message).toMatch(
      /MCP tool files__add reported an error: .*Invalid arguments for tool add/,
    );
    const notObject = await kitErrorOf(run(mcp, 'files__add', [1, 2]));
    expect(notObject.kind).toBe(ErrorKind.Protocol);
    const unknown = await kitErrorOf(run(mcp, 'files__nope'));
    expect(unknown.kind).toBe(ErrorKind.NotFound);
    expect(unknown.message).toMatch(/^MCP server files has no tool files__nope \(it offers files__add, /);
    // The connection survived all of it.
    expect(await run(mcp, 'files__add', { a: 20, b: 22 })).toBe('42');
  });

  test('a server that is down leaves its tools out of a model call; the others are still offered', async () => {
    const warnings: string[] = [];
    const mcp = tools(
      { files: stdioServer(), gone: { url: 'http://127.0.0.1:9/mcp', connectTimeoutMs: 30_000 } },
      { log: (message) => warnings.push(message) },
    );
    const offered = await mcp.offered({ threadId: 'thread-a', turn: 1 }, () => true, signal);
    expect(offered.some((tool) => tool.name === 'files__add')).toBe(true);
    expect(offered.some((tool) => tool.server === 'gone')).toBe(false);
    expect(warnings).toEqual([
      expect.stringMatching(/^MCP server gone .*could not be reached.*left out of this call$/),
    ]);
  });

  test('a cancelled call stops waiting at once, with the caller’s own reason', async () => {
    const mcp = tools({ files: stdioServer() });
    await run(mcp, 'files__pid');
    const cancel = new AbortController();
    const call = mcp.run(
      { threadId: 'thread-a', name: 'files__slow', input: { ms: 600_000 } },
      cancel.signal,
    );
    cancel.abort(new Error('interrupted by a person'));
    await expect(call).rejects.toThrow('interrupted by a person');
  });
});
