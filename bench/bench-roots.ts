// The root runs bench rows attach: a module of its own, which the rows import (agents-kit-ops, the
// live-output and tree-stream rows), so none of them imports another row's module (agents-kit-ops
// imports step-model, which imports live-output: a cycle there left `noopTool` uninitialized).
import { ThreadService } from '../client/thread-service';
import type { ScriptStepShape } from '../domain/schemas';
import type { BenchContext } from './primitives';

export const replyOnly: ScriptStepShape[][] = [[{ type: 'reply', text: 'done' }]];

/** A root run of its own per operation, so no operation's history load slows another's. */
export async function attachRoot(context: BenchContext, label: string): Promise<ThreadService> {
  const service = await ThreadService.attach(context.client, {
    taskQueue: context.taskQueue,
    owner: 'bench',
    root: { task: `bench ${label}`, name: 'root', kernel: { type: 'scripted', turns: replyOnly } },
    grant: { owner: 'bench', maxConcurrent: 10_000, maxTotal: 10_000, idleTimeoutMs: 3_600_000 },
  });
  // No shutdown at the end: the run's dev server and database are thrown away with their workflows.
  return service;
}
