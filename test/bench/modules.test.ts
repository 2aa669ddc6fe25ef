// `npm run bench` is not part of `npm test` (it measures, it does not assert), so a bench module that
// cannot even load would go unnoticed: an import cycle once left `noopTool` uninitialized and every
// bench run failed at start-up. Loading each module of bench/ (not the entry points, which run) catches it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../helpers/paths';

/** An entry point runs when loaded: it calls `main()` at its top level (run.ts, closing-retry.ts, …). */
const isEntryPoint = (name: string) =>
  name === 'median.ts' || /^main\(\)/m.test(readFileSync(join(projectRoot, 'bench', name), 'utf8'));
const modules = readdirSync(join(projectRoot, 'bench')).filter(
  (name) => name.endsWith('.ts') && !isEntryPoint(name),
);

test('the entry points are told apart: none of the loaded modules runs', () => {
  expect(modules).not.toContain('run.ts');
  expect(modules).not.toContain('closing-retry.ts');
  expect(modules).toContain('agent-step.ts');
});

test.each(modules)('bench/%s loads', async (name) => {
  const loaded = (await import(join(projectRoot, 'bench', name))) as Record<string, unknown>;
  for (const [exported, value] of Object.entries(loaded))
    expect([exported, value]).not.toEqual([exported, undefined]);
});
