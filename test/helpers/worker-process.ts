import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from './paths';

/** A worker in a child process (test/helpers/worker-child.ts) that a test can SIGKILL and restart. */
export class WorkerProcess {
  private child: ChildProcess | undefined;
  starts = 0;
  kills = 0;

  constructor(
    private readonly address: string,
    private readonly taskQueue: string,
    private readonly bundlePath: string,
    /** More environment for the worker (a jest test's `process.env` is its own copy, not the child's). */
    private readonly env: Record<string, string> = {},
  ) {}

  /** Starts the worker and resolves once it polls. */
  async start(): Promise<void> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(__dirname, 'worker-child.ts'), this.address, this.taskQueue, this.bundlePath],
      { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...this.env } },
    );
    this.child = child;
    this.starts++;
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`worker child exited (${code}) before it was ready`)));
      lines.on('line', (line) => {
        if (line === 'ready') resolve();
      });
    });
  }

  /** The running process's id (its worker's default identity is `<pid>@<host>`). */
  get pid(): number | undefined {
    return this.alive ? this.child!.pid : undefined;
  }

  /** Whether the worker process is still running. */
  get alive(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  /**
   * SIGTERM, as a deploy stops a worker: the SDK's shutdown stops polling, lets the tasks it holds finish
   * (activities get the child's shutdown grace time) and the process exits. Resolves with its exit code.
   */
  async drain(): Promise<number | null> {
    const child = this.child;
    if (!child || !this.alive) return null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    return exited;
  }

  /** SIGKILL: no shutdown, no flush, whatever the worker was doing is cut off. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    this.kills++;
    await exited;
  }
}
