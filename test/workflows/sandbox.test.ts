import { bundleWorkflowCode } from '@temporalio/worker';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, projectRoot } from '../helpers/paths';
import { bundleOptions } from '../../workers/create-worker';

const silent = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

test('workflows/ bundles for the sandbox and exports every workflow type', async () => {
  const { code } = await bundleWorkflowCode({ ...bundleOptions, logger: silent });
  expect(code).toContain('rootRunWorkflow');
  // Loaded once per worker thread and shared by its workflows (workflows/shared-modules.ts).
  expect(code).toMatch(/function preloadModules\(\) \{\s*__webpack_require__\([^)]*shared-modules\.ts/);
});

test('the bundler refuses workflow code that imports a Node built-in', async () => {
  // Inside the project, so that @temporalio/workflow resolves as it does for workflows/.
  mkdirSync(dataDir, { recursive: true });
  const dir = mkdtempSync(join(dataDir, 'sandbox-probe-'));
  const file = join(dir, 'index.ts');
  writeFileSync(
    file,
    "import { readFileSync } from 'fs';\nexport async function leakyWorkflow() { return readFileSync('/etc/hostname', 'utf8'); }\n",
  );
  await expect(bundleWorkflowCode({ workflowsPath: file, logger: silent })).rejects.toThrow(
    /disallowed modules:\s+- 'fs'/,
  );
  rmSync(dir, { recursive: true, force: true });
});

describe('the lint override for sandboxed folders (the real eslint.config.mjs)', () => {
  // ESLint runs as its own process, as in `npm run lint`; the probe is read from stdin.
  const lint = (folder: string, code: string): string[] => {
    const result = spawnSync(
      process.execPath,
      [
        join(projectRoot, 'node_modules', 'eslint', 'bin', 'eslint.js'),
        '--stdin',
        '--stdin-filename',
        `${folder}/lint-probe.ts`,
        '--format',
        'json',
      ],
      { input: code, encoding: 'utf8', cwd: projectRoot },
    );
    const [report] = JSON.parse(result.stdout) as {
      messages: { ruleId: string | null; message: string }[];
    }[];
    const fatal = report!.messages.find((message) => message.ruleId === null);
    if (fatal) throw new Error(fatal.message);
    return report!.messages.map((message) => message.ruleId!);
  };

  test.each(['workflows', 'domain'])('catches a Node built-in imported in %s/', (folder) => {
    expect(
      lint(folder, "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n"),
    ).toContain('no-restricted-imports');
    expect(lint(folder, "import { createHash } from 'crypto';\nexport const hash = createHash;\n")).toContain(
      'no-restricted-imports',
    );
  });

  test('catches @temporalio/client imported in workflows/', () => {
    expect(
      lint('workflows', "import { Client } from '@temporalio/client';\nexport const c = Client;\n"),
    ).toContain('no-restricted-imports');
  });

  test('catches a floating promise in workflows/', () => {
    expect(
      lint(
        'workflows',
        "import { sleep } from '@temporalio/workflow';\nexport function f(): void {\n  sleep(1);\n}\n",
      ),
    ).toContain('@typescript-eslint/no-floating-promises');
  });

  test('allows Node built-ins outside the sandbox', () => {
    expect(
      lint('workers', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n"),
    ).toEqual([]);
  });
});
