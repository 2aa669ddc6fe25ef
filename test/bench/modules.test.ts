// `npm run bench` is not part of `npm test` (it measures, it does not assert), so a bench module that
// cannot even load would go unnoticed: an import cycle once left `noopTool` uninitialized and every
// bench run failed at start-up. Loading each module of bench/ (not the entry points, which run) catches it.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../helpers/paths';

const entryPoints = new Set(['run.ts', 'median.ts', 'interleaved.ts']);
const modules = readdirSync(join(projectRoot, 'bench')).filter(
  (name) => name.endsWith('.ts') && !entryPoints.has(name),
);

test.each(modules)('bench/%s loads', async (name) => {
  const loaded = (await import(join(projectRoot, 'bench', name))) as Record<string, unknown>;
  for (const [exported, value] of Object.entries(loaded))
    expect([exported, value]).not.toEqual([exported, undefined]);
});
