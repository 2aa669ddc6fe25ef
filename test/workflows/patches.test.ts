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

test('the golden histories are protocol v1 recordings', () => {
  const files = readdirSync(join(projectRoot, 'test', 'fixtures', 'histories'));
  expect(files.length).toBeGreaterThan(0);
  expect(
    files.filter(
      (file) => !file.startsWith('v1-') && !Object.keys(patches).some((id) => file.startsWith(`${id}-`)),
    ),
  ).toEqual([]);
});
