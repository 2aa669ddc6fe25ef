// The workflow bundle's inline source map names the files webpack read by their absolute paths on the
// machine that built it (`/home/…/.dist-next/workflows/agent-workflow.js`, a folder renamed to dist/ at
// the end of the build). Temporal prints those names in workflow stack traces (the Web UI's stack trace,
// a failed workflow task's message), where they point nowhere. Rewritten here to names that say where
// the code lives in an installed app: `agents-kit/dist/workflows/agent-workflow.js`, and
// `zod/v4/core/core.js` for a dependency.

import { Buffer } from 'node:buffer';

const marker = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';

/**
 * `code` (a bundle with its source map inline) with every name under `buildDir` renamed to
 * `agents-kit/dist/…` and every one under `<projectRoot>/node_modules/` to its package path.
 */
export function portableSourceMap(code, { projectRoot, buildDir }) {
  const at = code.lastIndexOf(marker);
  if (at < 0) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(code.slice(at + marker.length).trim(), 'base64').toString('utf8'));
  const portable = (text) =>
    text.replaceAll(`${buildDir}/`, 'agents-kit/dist/').replaceAll(`${projectRoot}/node_modules/`, '');
  map.sources = map.sources.map(portable);
  if (map.sourcesContent) map.sourcesContent = map.sourcesContent.map((text) => text && portable(text));
  return `${code.slice(0, at)}${marker}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}
