// SPEC S7.4: every patch id the workflow code uses is listed, with its reason, in workflows/patches.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { patches } from '../../workflows/patches';
import { projectRoot } from '../helpers/paths';

test('workflow code calls patched / deprecatePatch only with ids from workflows/patches.ts', () => {
  const dir = join(projectRoot, 'workflows');
  const calls: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts') && name !== 'patches.ts')) {
    const source = readFileSync(join(dir, file), 'utf8');
    for (const match of source.matchAll(/\b(?:patched|deprecatePatch)\(([^)]*)\)/g))
      calls.push(`${file}: ${match[1]}`);
  }
  const unlisted = calls.filter((call) => !/patches\.[A-Za-z]+\s*$/.test(call.split(': ')[1] ?? ''));
  expect(unlisted).toEqual([]);
  for (const call of calls) expect(Object.keys(patches)).toContain(call.split('patches.')[1]?.trim());
});

/**
 * Features added after v1 without a patch, their histories recorded beside v1's: ones that only add
 * handlers, and ones the attaching client turns on in the workflows' input (workflows/patches.ts).
 */
const handlerOnlyFeatures = [
  'live-output',
  'approvalPolicy',
  'budgets',
  'transcriptDelta',
  'outsideEndsCheckMs',
];

test('the golden histories are protocol v1 recordings, a patch’s, or a handler-only feature’s', () => {
  const files = readdirSync(join(projectRoot, 'test', 'fixtures', 'histories'));
  expect(files.length).toBeGreaterThan(0);
  const prefixes = ['v1', ...Object.keys(patches), ...handlerOnlyFeatures];
  expect(files.filter((file) => !prefixes.some((prefix) => file.startsWith(`${prefix}-`)))).toEqual([]);
  expect(files.some((file) => file.startsWith('v1-'))).toBe(true);
});
