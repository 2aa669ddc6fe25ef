// SPEC S11.1: MCP tools are offered as `server__tool`, provider-legal, with collisions resolved the same
// way on every worker, whatever order the server lists its tools in.
import fc from 'fast-check';
import { isProviderToolName, mcpServerOf } from '../../domain/mcp-names';
import { namespaceTools } from '../../activities/mcp-naming';

test('a legal name keeps its own name under the server namespace', () => {
  expect([...namespaceTools('files', ['read', 'write-all']).entries()]).toEqual([
    ['read', 'files__read'],
    ['write-all', 'files__write-all'],
  ]);
});

test('a name with other characters is cleaned; one that clashes with a legal name gets a digest', () => {
  const names = namespaceTools('files', ['read.file', 'read_file', 'list dir']);
  expect(names.get('read_file')).toBe('files__read_file');
  expect(names.get('read.file')).toMatch(/^files__read_file_[0-9a-f]{8}$/);
  expect(names.get('list dir')).toBe('files__list_dir');
});

test('two names that clean to the same name both get digests (neither wins by order)', () => {
  const names = namespaceTools('s', ['a.b', 'a:b']);
  expect(names.get('a.b')).toMatch(/^s__a_b_[0-9a-f]{8}$/);
  expect(names.get('a:b')).toMatch(/^s__a_b_[0-9a-f]{8}$/);
  expect(names.get('a.b')).not.toBe(names.get('a:b'));
});

test('a name too long is cut to 64 characters with a digest of the whole name', () => {
  const long = `summarize_${'very_'.repeat(12)}long_documents`;
  const other = `summarize_${'very_'.repeat(12)}long_reports`;
  const names = namespaceTools('files', [long, other]);
  expect(names.get(long)).toHaveLength(64);
  expect(names.get(other)).toHaveLength(64);
  expect(names.get(long)).not.toBe(names.get(other));
});

test('a name listed twice counts once', () => {
  expect(namespaceTools('s', ['x', 'x']).size).toBe(1);
});

const toolName = fc.oneof(
  fc.string({ minLength: 1, maxLength: 80 }),
  fc.constantFrom('read', 'read_file', 'read.file', 'read:file', 'a'.repeat(70), `${'a'.repeat(70)}b`),
);

test('property: names are provider-legal, unique, in the server namespace, and independent of order', () => {
  fc.assert(
    fc.property(fc.uniqueArray(toolName, { maxLength: 12 }), fc.context(), (tools, context) => {
      const names = namespaceTools('my-server', tools);
      const shuffled = namespaceTools('my-server', [...tools].reverse());
      context.log(JSON.stringify([...names]));
      expect(new Set(names.values()).size).toBe(tools.length);
      for (const [tool, name] of names) {
        expect(isProviderToolName(name)).toBe(true);
        expect(mcpServerOf(name)).toBe('my-server');
        expect(shuffled.get(tool)).toBe(name);
      }
    }),
  );
});
