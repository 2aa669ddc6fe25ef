// SPEC S4.1, S11.1: one allow-list rule for every tool (built-in, user, MCP `server__tool`), and a
// child's tools are never more than its parent's.
import fc from 'fast-check';
import { isMcpServerName, isProviderToolName, mcpServerOf, sanitizeToolPart } from '../../domain/mcp-names';
import * as schemas from '../../domain/schemas';
import { allowsTool, allTools, narrowTools } from '../../domain/tool-allow-list';

const toolNames = fc.constantFrom('echo', 'publish', 'files__read', 'files__write', 'web__search', allTools);
const allowList = fc.uniqueArray(toolNames, { maxLength: 6 });

describe('allowsTool', () => {
  test('`*` allows every tool, MCP tools included; otherwise only the names listed', () => {
    expect(allowsTool([allTools], 'files__read')).toBe(true);
    expect(allowsTool(['files__read'], 'files__read')).toBe(true);
    expect(allowsTool(['files__read'], 'files__write')).toBe(false);
    // A server's name is not a wildcard for its tools.
    expect(allowsTool(['files'], 'files__read')).toBe(false);
    expect(allowsTool([], 'echo')).toBe(false);
  });

  test('schemas.ts still exports the same rules (moved, not changed)', () => {
    expect(schemas.allowsTool).toBe(allowsTool);
    expect(schemas.narrowTools).toBe(narrowTools);
    expect(schemas.allTools).toBe(allTools);
  });
});

describe('narrowTools (a child’s tools are the intersection with its parent’s)', () => {
  test('examples', () => {
    expect(narrowTools([allTools], undefined)).toEqual([allTools]);
    expect(narrowTools(['files__read', 'echo'], ['files__read', 'files__write'])).toEqual(['files__read']);
    expect(narrowTools(['files__read'], [allTools])).toEqual([]);
    expect(narrowTools([allTools], ['web__search'])).toEqual(['web__search']);
  });

  test('property: every tool a child may run, its parent may run', () => {
    fc.assert(
      fc.property(
        allowList,
        fc.option(allowList, { nil: undefined }),
        toolNames,
        (parent, requested, tool) => {
          const child = narrowTools(parent, requested);
          if (allowsTool(child, tool)) expect(allowsTool(parent, tool)).toBe(true);
        },
      ),
    );
  });

  test('property: narrowing twice is narrowing once (a grandchild asking the same gets the same)', () => {
    fc.assert(
      fc.property(allowList, allowList, (parent, requested) => {
        const child = narrowTools(parent, requested);
        expect(narrowTools(child, requested)).toEqual(child);
      }),
    );
  });
});

describe('MCP tool names', () => {
  test('the server of a namespaced name is the text before the first __', () => {
    expect(mcpServerOf('files__read')).toBe('files');
    expect(mcpServerOf('web-search__find__all')).toBe('web-search');
    expect(mcpServerOf('echo')).toBeUndefined();
    expect(mcpServerOf('__x')).toBeUndefined();
  });

  test.each(['github', 'web-search', 'a', 'my_server', 'A1-b_c'])('%s is a server name', (name) => {
    expect(isMcpServerName(name)).toBe(true);
  });

  test.each(['', 'bad__name', '_x', 'x_', '-x', 'has space', 'a.b', 'x'.repeat(33)])(
    '%j is not a server name',
    (name) => {
      expect(isMcpServerName(name)).toBe(false);
    },
  );

  test('property: a server name never contains the separator, so the namespace is unambiguous', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.string({ minLength: 1, maxLength: 20 }),
        (server, tool) => {
          if (isMcpServerName(server)) expect(mcpServerOf(`${server}__${tool}`)).toBe(server);
        },
      ),
    );
  });

  test('property: a cleaned tool part is provider-legal (up to the length limit)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (name) => {
        expect(isProviderToolName(sanitizeToolPart(name))).toBe(true);
      }),
    );
  });
});
