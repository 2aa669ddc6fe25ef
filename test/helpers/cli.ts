import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from './paths';
import { workflowBundlePath } from './temporal';

/** What a finished CLI process left behind. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The package's own bin: the compiled CLI, as a user runs it (jest's set-up builds dist/ when stale). */
const bin = join(projectRoot, 'bin', 'agents-kit.mjs');

/** A child process whose output is collected: `output()` so far, `done` once it has closed. */
export type CliProcess = ChildProcessWithoutNullStreams & {
  output: () => CliResult;
  done: Promise<CliResult>;
};

/** Collects a child process's stdout and stderr. */
export function watchProcess(child: ChildProcessWithoutNullStreams): CliProcess {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const output = () => ({ code: child.exitCode, stdout, stderr });
  const done = new Promise<CliResult>((settle) =>
    child.on('close', (code) => settle({ code, stdout, stderr })),
  );
  return Object.assign(child, { output, done });
}

/**
 * Starts `agents-kit <args>` as a child process; `detached`: in a process group of its own, which a test
 * signals as a terminal's Ctrl-C does (`process.kill(-child.pid, 'SIGINT')`).
 */
export function startCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  { detached = false } = {},
): CliProcess {
  return watchProcess(
    spawn(process.execPath, [bin, ...args], {
      cwd: projectRoot,
      env: { ...process.env, AGENTS_KIT_TASK_QUEUE: undefined, TEMPORAL_ADDRESS: undefined, ...env },
      detached,
    }),
  );
}

/** Runs `agents-kit <args>` to completion (killing it after `timeoutMs`). */
export async function runCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  const child = startCli(args, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await child.done;
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until the child's stderr (or stdout) matches `pattern`; fails with what it printed otherwise. */
export async function untilOutput(child: CliProcess, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stdout, stderr, code } = child.output();
    if (pattern.test(stderr) || pattern.test(stdout)) return;
    if (code !== null || Date.now() > deadline) {
      throw new Error(`no ${pattern} from the CLI (exit ${code}); stdout: ${stdout}\nstderr: ${stderr}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

/**
 * `agents-kit worker` (the suite's prebuilt bundle) on `taskQueue`, its model a real OpenAI-compatible
 * server at `modelUrl` (test/helpers/openai-server.ts), with more environment from `env`.
 */
export function startModelWorker(
  address: string,
  taskQueue: string,
  modelUrl: string,
  env: Record<string, string> = {},
  options: { detached?: boolean } = {},
): CliProcess {
  return startCli(
    ['worker', '--workflow-bundle', workflowBundlePath()],
    {
      TEMPORAL_ADDRESS: address,
      AGENTS_KIT_TASK_QUEUE: taskQueue,
      AGENTS_KIT_MODEL_PROVIDER: 'openai-compatible',
      AGENTS_KIT_MODEL: 'test-model',
      AGENTS_KIT_MODEL_BASE_URL: modelUrl,
      ...env,
    },
    options,
  );
}
