// SPEC S11.1, S2.4, S8.3: the worker's MCP servers come from AGENTS_KIT_MCP_SERVERS (or code), are
// validated strictly at start-up, and a bad entry is a Protocol KitError naming the variable and field.
import { z } from 'zod';
import { createActivities, defineTool } from '../../activities';
import { maxMcpServers, mcpServersFromJson, parseMcpServers } from '../../activities/mcp-config';
import { createMcpTools } from '../../activities/mcp-tools';
import { ErrorKind, KitError } from '../../domain/errors';
import { loadConfig, loadMcpServers } from '../../workers/config';

function protocolError(run: () => unknown): KitError {
  try {
    run();
  } catch (error) {
    if (error instanceof KitError && error.kind === ErrorKind.Protocol) return error;
    throw error;
  }
  throw new Error('expected a Protocol KitError');
}

const variable = 'AGENTS_KIT_MCP_SERVERS';
const fromEnvironment = (value: unknown) => () =>
  loadConfig({ [variable]: typeof value === 'string' ? value : JSON.stringify(value) });

test('both transports, with their defaults; the type follows from command or url', () => {
  const servers = loadMcpServers(
    loadConfig({
      [variable]: JSON.stringify({
        files: {
          command: 'npx',
          args: ['-y', 'server-filesystem', '/srv'],
          env: { LOG_LEVEL: 'warn' },
          cwd: '/',
        },
        search: {
          url: 'https://mcp.example.com/mcp',
          headers: { Authorization: 'Bearer x' },
          approvalTools: ['index'],
          timeoutMs: 5000,
        },
      }),
    }),
  );
  expect(servers).toEqual({
    files: {
      type: 'stdio',
      command: 'npx',
      args: ['-y', 'server-filesystem', '/srv'],
      env: { LOG_LEVEL: 'warn' },
      cwd: '/',
      needsApproval: false,
      approvalTools: [],
      timeoutMs: 60_000,
      connectTimeoutMs: 15_000,
    },
    search: {
      type: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer x' },
      needsApproval: false,
      approvalTools: ['index'],
      timeoutMs: 5000,
      connectTimeoutMs: 15_000,
    },
  });
  expect(loadMcpServers(loadConfig({}))).toEqual({});
  expect(loadMcpServers(loadConfig({ [variable]: '' }))).toEqual({});
});

test.each<[string, unknown, RegExp, string]>([
  ['not JSON', '{files:', /^AGENTS_KIT_MCP_SERVERS is not JSON \(.*\): expected \{"name"/, variable],
  [
    'not an object',
    [1],
    /^invalid AGENTS_KIT_MCP_SERVERS: Invalid input: expected record, received array$/,
    variable,
  ],
  [
    'a server name with __',
    { my__files: { command: 'x' } },
    /my__files: "my__files" is not a server name: expected 1-32 characters/,
    `${variable}.my__files`,
  ],
  [
    'neither command nor url',
    { files: { args: [] } },
    /files\.type: expected "command" \(a stdio server\) or "url"/,
    `${variable}.files.type`,
  ],
  [
    'both command and url',
    { files: { command: 'x', url: 'http://x' } },
    /files: Unrecognized key: "url"/,
    `${variable}.files`,
  ],
  [
    'an unknown field',
    { files: { command: 'x', retries: 3 } },
    /files: Unrecognized key: "retries"/,
    `${variable}.files`,
  ],
  ['an empty command', { files: { command: '' } }, /files\.command: /, `${variable}.files.command`],
  [
    'args that are not strings',
    { files: { command: 'x', args: [1] } },
    /files\.args\.0: /,
    `${variable}.files.args.0`,
  ],
  [
    'a bad environment name',
    { files: { command: 'x', env: { 'A-B': 'x' } } },
    /files\.env\.A-B: "A-B" is not an environment variable name/,
    `${variable}.files.env.A-B`,
  ],
  [
    'a missing cwd',
    { files: { command: 'x', cwd: '/nonexistent/dir' } },
    /files\.cwd: no such directory/,
    `${variable}.files.cwd`,
  ],
  [
    'a URL of another scheme',
    { web: { url: 'ftp://example.com/mcp' } },
    /web\.url: expected an http:\/\/ or https:\/\/ URL/,
    `${variable}.web.url`,
  ],
  [
    'a bad header name',
    { web: { url: 'https://x', headers: { 'Bad Header': 'x' } } },
    /web\.headers\.Bad Header: .*not an HTTP header name/,
    `${variable}.web.headers.Bad Header`,
  ],
  [
    'a timeout too short',
    { web: { url: 'https://x', timeoutMs: 10 } },
    /web\.timeoutMs: Too small/,
    `${variable}.web.timeoutMs`,
  ],
  [
    'a timeout too long',
    { web: { url: 'https://x', connectTimeoutMs: 10_000_000 } },
    /web\.connectTimeoutMs: Too big/,
    `${variable}.web.connectTimeoutMs`,
  ],
  [
    'needsApproval not a boolean',
    { web: { url: 'https://x', needsApproval: 'yes' } },
    /web\.needsApproval: /,
    `${variable}.web.needsApproval`,
  ],
])('%s is a Protocol error naming the field', (_label, value, message, field) => {
  const error = protocolError(fromEnvironment(value));
  expect(error.message).toMatch(message);
  expect(error.retryable).toBe(false);
  expect((error.details as { fields: string[] }).fields).toContain(field);
});

test('sizes are bounded: servers, args, environment, headers, the variable itself', () => {
  const many = Object.fromEntries(
    Array.from({ length: maxMcpServers + 1 }, (_, index) => [`s${index}`, { command: 'x' }]),
  );
  expect(protocolError(fromEnvironment(many)).message).toMatch(/at most 32 MCP servers/);
  expect(protocolError(fromEnvironment({ f: { command: 'x', args: Array(257).fill('a') } })).message).toMatch(
    /f\.args: Too big/,
  );
  const env = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`V${index}`, 'x']));
  expect(protocolError(fromEnvironment({ f: { command: 'x', env } })).message).toMatch(
    /f\.env: at most 100 variables/,
  );
  const headers = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`h${index}`, 'x']));
  expect(protocolError(fromEnvironment({ w: { url: 'https://x', headers } })).message).toMatch(
    /w\.headers: at most 64 headers/,
  );
  expect(protocolError(() => mcpServersFromJson(`{${' '.repeat(300_000)}}`)).message).toMatch(
    /at most 262144/,
  );
  expect(protocolError(fromEnvironment(`{"f":{"command":"${'x'.repeat(300_000)}"}}`)).message).toMatch(
    /AGENTS_KIT_MCP_SERVERS: Too big/,
  );
});

test('a header value never appears in an error message', () => {
  const error = protocolError(
    fromEnvironment({ w: { url: 'not a url', headers: { Authorization: 'Bearer hunter2' } } }),
  );
  expect(error.message).not.toMatch(/hunter2/);
});

test('in code: createMcpTools validates the same way, naming mcpServers', () => {
  const error = protocolError(() => createMcpTools({ files: { command: 'x', timeoutMs: -1 } }));
  expect(error.message).toMatch(/^invalid mcpServers: files\.timeoutMs: /);
  expect((error.details as { fields: string[] }).fields).toEqual(['mcpServers.files.timeoutMs']);
  expect(parseMcpServers({ web: { url: 'http://127.0.0.1:1/mcp' } }).web).toMatchObject({ type: 'http' });
});

test('a user tool in an MCP server’s namespace is refused: it would shadow the server’s tools', async () => {
  const mcp = createMcpTools({ github: { url: 'http://127.0.0.1:1/mcp' } });
  try {
    const tool = defineTool({
      name: 'github__search',
      description: 'x',
      input: z.object({}),
      run: async () => 'x',
    });
    const error = protocolError(() => createActivities({ mcp, tools: [tool] }));
    expect(error.message).toBe(
      'tool github__search: names starting github__ belong to the MCP server github; rename the tool',
    );
    // Another prefix is fine.
    const other = defineTool({
      name: 'gitlab__search',
      description: 'x',
      input: z.object({}),
      run: async () => 'x',
    });
    expect(createActivities({ mcp, tools: [other] }).runTool).toBeInstanceOf(Function);
  } finally {
    await mcp.close();
  }
});
