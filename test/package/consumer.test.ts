// SPEC S9: agents-kit as a user gets it. The package is packed as `npm publish` would pack it, installed
// from the tarball into an app outside this repository (preferring the local npm cache), and used from
// an ESM app (nodenext), a CommonJS app and plain JavaScript, under strict TypeScript settings, run with
// plain `node` against the suite's dev server: a worker from the package and the installed
// `agents-kit worker` bin, attach, spawn, conversations, shutdown, KitError across two package copies.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../workers/dev-server';
import { projectRoot } from '../helpers/paths';
import { testServerAddress, uniqueTaskQueue } from '../helpers/temporal';
import { untilOutput, watchProcess } from '../helpers/cli';

interface PackedFile {
  path: string;
}
interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: PackedFile[];
}

const ourPackage = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let workDir: string;
let appDir: string;
let packed: Packed;

/** Runs a command to completion; fails with its output when it exits non-zero. */
function run(command: string, args: string[], cwd: string, allowFailure = false): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (!allowFailure && result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result;
}

/** The one JSON line an app printed last. */
const report = <Value>(result: SpawnSyncReturns<string>): Value =>
  JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null') as Value;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'agents-kit-consumer-'));
  // dist/ is current (jest's set-up builds it when stale), so no build script runs while packing.
  const pack = run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', workDir], projectRoot);
  packed = (JSON.parse(pack.stdout) as Packed[])[0]!;
  appDir = join(workDir, 'app');
  cpSync(join(projectRoot, 'test', 'fixtures', 'consumer'), appDir, { recursive: true });
  const version = (name: string) => ourPackage.dependencies[name] ?? ourPackage.devDependencies[name]!;
  writeFileSync(
    join(appDir, 'package.json'),
    JSON.stringify({
      name: 'consumer-app',
      private: true,
      dependencies: {
        'agents-kit': `file:${join(workDir, packed.filename)}`,
        ...Object.fromEntries(
          ['@temporalio/client', '@temporalio/worker', 'zod', 'typescript', '@types/node'].map((name) => [
            name,
            version(name),
          ]),
        ),
      },
    }),
  );
  run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund'], appDir);
  // A second copy of the package, as when two versions end up in one dependency tree.
  const copies = join(appDir, 'copy2', 'node_modules');
  mkdirSync(copies, { recursive: true });
  run('tar', ['-xzf', join(workDir, packed.filename), '-C', copies], appDir);
  renameSync(join(copies, 'package'), join(copies, 'agents-kit'));
}, 600_000);

afterAll(() => {
  if (workDir && !process.env.AGENTS_KIT_KEEP_TEST_DATA) rmSync(workDir, { recursive: true, force: true });
});

test('the tarball holds built JavaScript, declarations, the workflow bundle and the bin — no tests, fixtures or benchmarks', () => {
  const paths = packed.files.map((file) => file.path);
  expect(paths).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'bin/agents-kit.mjs',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/workers/index.js',
      'dist/workers/index.d.ts',
      'dist/workflows/index.js',
      'dist/workflow-bundle.js',
      'dist/workflow-bundle-untraced.js',
    ]),
  );
  expect(
    paths.filter((path) => /^(test|bench|scripts|\.agents-kit|\.data)\/|fixtures|\.test\./.test(path)),
  ).toEqual([]);
  expect(paths.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
  console.log(
    `agents-kit tarball: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked`,
  );
});

test('the Temporal SDK is a peer dependency: the app and agents-kit share one copy of it', () => {
  const manifest = JSON.parse(
    readFileSync(join(appDir, 'node_modules', 'agents-kit', 'package.json'), 'utf8'),
  ) as { dependencies: Record<string, string>; peerDependencies: Record<string, string> };
  const sdk = ['activity', 'client', 'common', 'proto', 'worker', 'workflow'].map(
    (name) => `@temporalio/${name}`,
  );
  expect(Object.keys(manifest.dependencies).filter((name) => sdk.includes(name))).toEqual([]);
  for (const name of sdk) {
    expect(manifest.peerDependencies[name]).toBe(ourPackage.devDependencies[name]);
    expect(existsSync(join(appDir, 'node_modules', 'agents-kit', 'node_modules', name))).toBe(false);
    expect(existsSync(join(appDir, 'node_modules', name, 'package.json'))).toBe(true);
  }
});

test('every package its JavaScript and declarations import is one it declares (installs without hoisting, e.g. pnpm with hoist=false)', () => {
  const installed = join(appDir, 'node_modules', 'agents-kit');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
  };
  const declared = new Set([
    ...Object.keys(manifest.dependencies),
    ...Object.keys(manifest.peerDependencies),
  ]);
  const undeclared = new Set<string>();
  for (const file of packed.files.map((entry) => entry.path)) {
    if (!/\.(c?js|mjs|d\.ts)$/.test(file) || /workflow-bundle/.test(file)) continue;
    // Code, not comments: an @example names 'agents-kit' as a user imports it.
    const code = readFileSync(join(installed, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '');
    for (const [, specifier] of code.matchAll(/(?:require\(|from\s+|import\()\s*['"]([^'".][^'"]*)['"]/g)) {
      if (specifier!.startsWith('node:') || builtinModules.includes(specifier!.split('/')[0]!)) continue;
      const parts = specifier!.split('/');
      const name = specifier!.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
      if (!declared.has(name)) undeclared.add(`${name} (${file})`);
    }
  }
  expect([...undeclared]).toEqual([]);
});

test("the workflow bundles' source maps name the package's files, not the machine that built them", () => {
  const installed = join(appDir, 'node_modules', 'agents-kit');
  for (const bundle of ['workflow-bundle.js', 'workflow-bundle-untraced.js']) {
    const code = readFileSync(join(installed, 'dist', bundle), 'utf8');
    const inline = /\/\/# sourceMappingURL=data:application\/json;[^,]*base64,(\S+)\s*$/.exec(code);
    const map = JSON.parse(Buffer.from(inline![1]!, 'base64').toString('utf8')) as { sources: string[] };
    // Temporal prints these in workflow stack traces: `agents-kit/dist/workflows/…`, `zod/v4/…`.
    expect(
      map.sources.filter((source) => source.includes(projectRoot) || /^\/|\.dist-next/.test(source)),
    ).toEqual([]);
    const ours = map.sources.filter((source) => source.startsWith('agents-kit/dist/'));
    expect(ours).toContain('agents-kit/dist/workflows/agent-workflow.js');
    const missing = ours.filter(
      (source) =>
        !source.endsWith('-autogenerated-entrypoint.cjs') &&
        !existsSync(join(installed, source.slice('agents-kit/'.length))),
    );
    expect([bundle, missing]).toEqual([bundle, []]);
  }
});

test('npm publish --dry-run accepts the package', () => {
  const result = run(npm, ['publish', '--dry-run', '--ignore-scripts'], projectRoot);
  expect(result.stderr).toMatch(/agents-kit@\d+\.\d+\.\d+/);
});

test('ESM and CommonJS apps type-check under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess', () => {
  run(join(appDir, 'node_modules', '.bin', 'tsc'), ['-p', 'esm'], appDir);
  run(join(appDir, 'node_modules', '.bin', 'tsc'), ['-p', 'cjs'], appDir);
  // With the declaration files checked too, none of the errors is in ours (Temporal's own .d.ts have
  // a few under exactOptionalPropertyTypes, which is why apps set skipLibCheck).
  const strict = run(
    join(appDir, 'node_modules', '.bin', 'tsc'),
    ['-p', 'esm', '--noEmit', '--skipLibCheck', 'false'],
    appDir,
    true,
  );
  const errors = strict.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  expect(errors.filter((line) => !line.startsWith('node_modules/@temporalio/'))).toEqual([]);
}, 300_000);

test('plain JavaScript imports every entry point, from ESM and from CommonJS', () => {
  expect(report(run(process.execPath, ['plain.mjs'], appDir))).toEqual({
    kitError: true,
    functions: true,
    workflowsPath: true,
  });
  expect(report(run(process.execPath, ['plain.cjs'], appDir))).toEqual({
    kitError: true,
    functions: true,
    workflows: ['agentWorkflow', 'conversationPageWorkflow', 'conversationWorkflow', 'rootRunWorkflow'],
  });
});

test('the ESM app runs its own worker from the package: a user tool, a spawn, a conversation read, KitError, shutdown', () => {
  const esm = run(
    process.execPath,
    [join('esm', 'dist', 'app.js'), testServerAddress(), uniqueTaskQueue('esm')],
    appDir,
  );
  expect(report(esm)).toEqual({
    rootThreadId: expect.stringMatching(/^thread_[0-9a-f]{32}$/),
    helperPath: '/root/helper',
    firstTurn: { status: 'completed', result: 'helper done' },
    echoed: ['hello'],
    conversation: expect.arrayContaining([{ seq: expect.any(Number), type: 'message' }]),
    conversationText: ['helper done'],
    caught: { instanceOf: true, is: true, kind: 'Protocol', message: expect.stringContaining('task') },
    protocolKind: 'Protocol',
    shutdown: { cancelled: 1, failed: 0 },
    prebuiltBundle: true,
    prebuiltUntracedBundle: true,
    payloadConverterShipped: true,
  });
}, 300_000);

test("the README's client example is this file, and runs as written", () => {
  const example = readFileSync(
    join(projectRoot, 'test', 'fixtures', 'consumer', 'esm', 'readme-example.ts'),
    'utf8',
  );
  expect(readFileSync(join(projectRoot, 'README.md'), 'utf8')).toContain(`\`\`\`ts\n${example}\`\`\``);
  // As written: the same text as an ES module, run by this Node without compiling (tsc checks it as
  // TypeScript in the app's build above).
  writeFileSync(join(appDir, 'esm', 'readme-example.mjs'), example);
  const result = spawnSync(process.execPath, [join('esm', 'readme-example.mjs')], {
    cwd: appDir,
    encoding: 'utf8',
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testServerAddress(),
      AGENTS_KIT_TASK_QUEUE: uniqueTaskQueue('readme'),
    },
    timeout: 240_000,
  });
  expect([result.status, result.status === 0 ? '' : result.stderr]).toEqual([0, '']);
  expect(result.stdout).toMatch(/^approving: \/root\/writer wants to run publish$/m);
  expect(result.stdout).toMatch(/^root answered: \(scripted model\) Done: Reconcile/m);
  expect(result.stdout).toMatch(/^vendor-a: (idle|running)$/m);
  expect(result.stdout).toMatch(/^refused: Protocol$/m);
  expect(result.stdout).toMatch(/^shut down: 3 cancelled, 0 failed$/m);
}, 300_000);

test('the CommonJS app runs against the installed `agents-kit worker` bin; KitError.is holds across two copies', async () => {
  const taskQueue = uniqueTaskQueue('cjs');
  const worker = watchProcess(
    spawn(join(appDir, 'node_modules', '.bin', 'agents-kit'), ['worker'], {
      cwd: appDir,
      env: { ...process.env, TEMPORAL_ADDRESS: testServerAddress(), AGENTS_KIT_TASK_QUEUE: taskQueue },
    }),
  );
  try {
    await untilOutput(worker, /worker polling task queue/, 120_000);
    const cjs = run(
      process.execPath,
      [
        join('cjs', 'dist', 'app.js'),
        testServerAddress(),
        taskQueue,
        join(appDir, 'copy2', 'node_modules', 'agents-kit'),
      ],
      appDir,
    );
    expect(report(cjs)).toEqual({
      first: { status: 'completed', result: 'delegated' },
      paths: ['/root', '/root/worker'],
      terminalAfterShutdown: true,
      types: expect.arrayContaining(['message']),
      notFound: { instanceOf: true, kind: 'NotFound' },
      copies: { sameClass: false, instanceOf: false, is: true, isBack: true, plainError: false },
      shutdown: { cancelled: 1, failed: 0 },
    });
  } finally {
    worker.kill('SIGTERM');
  }
  const exit = await worker.done;
  expect(exit.code).toBe(0);
  expect(exit.stderr).toContain('worker stopped');
}, 300_000);

test('`agents-kit dev` from the installed package keeps its database under the app, not inside the package', async () => {
  const port = await freePort();
  const dev = watchProcess(
    spawn(
      join(appDir, 'node_modules', '.bin', 'agents-kit'),
      ['dev', '--headless', '--port', String(port), '--json'],
      {
        cwd: appDir,
        env: { ...process.env, AGENTS_KIT_TASK_QUEUE: uniqueTaskQueue('dev') },
      },
    ),
  );
  try {
    await untilOutput(dev, /"dbFile"/, 120_000);
    const ready = JSON.parse(dev.output().stdout) as { dbFile: string };
    expect(ready.dbFile.startsWith(join(appDir, '.agents-kit') + '/')).toBe(true);
    expect(existsSync(ready.dbFile)).toBe(true);
    expect(existsSync(join(appDir, 'node_modules', 'agents-kit', '.agents-kit'))).toBe(false);
  } finally {
    dev.kill('SIGINT');
  }
  expect((await dev.done).code).toBe(0);
}, 300_000);

test('the installed bin answers --version with the package version, and --help with every command', () => {
  const version = run(join(appDir, 'node_modules', '.bin', 'agents-kit'), ['--version'], workDir);
  expect(version.stdout.trim()).toBe((ourPackage as unknown as { version: string }).version);
  const help = run(join(appDir, 'node_modules', '.bin', 'agents-kit'), ['--help'], workDir);
  for (const command of [
    'dev',
    'worker',
    'run',
    'tree',
    'send',
    'interrupt',
    'shutdown',
    'reconcile',
    'watch',
    'resolve',
  ])
    expect([command, new RegExp(`^  ${command}\\b`, 'm').test(help.stdout)]).toEqual([command, true]);
});
