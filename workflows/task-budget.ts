import { sleep, workflowInfo } from '@temporalio/workflow';
import { jsonBytes } from '../domain/bytes';

/**
 * Bytes of what agents-kit itself puts in one workflow task's answer to the server: update answers,
 * child starts, and what it signals (answers, notifications, an agent's reports to the root and its
 * control requests, a spawn among them of up to 512 KiB). The task's whole answer must stay under
 * 4 MiB, or it fails on every attempt and the workflow is stuck (and the server rejects every update
 * waiting on it). Beside these, a task echoes the arguments of every update it accepts or rejects (at
 * most 10 in flight, each at most `maxUpdateBytes`: 1.6 MB; a raw client's are held to 1.7 MB in all by
 * the server's `history.maxInFlightUpdatePayloads`, workers/dev-server.ts) and carries small commands
 * (status upserts, timers, a model call's transcript of at most 144 KiB): 4 MiB less 1.7 MB and this
 * leaves ~590 kB.
 *
 * One budget for all of them: a task's first answer of up to 1.5 MiB, nine spawns' echoes and five
 * starts once made 4.7 MB together, when answers, starts and publishes were bounded apart.
 */
export const taskSendBytes = 1_900_000;

/**
 * SPEC S3.10: what could together pass a workflow task's limit leaves in later tasks. The first thing a
 * task sends always goes (each is bounded below the budget: an answer by `maxAnswerBytes`, a start by
 * the spec limit, a publish by its batch); past the budget, the sender waits one timer, which starts a
 * new task. A task is told apart by the history length it started at, the same in every activation of
 * the task and on replay.
 */
export class TaskBudget {
  private task = -1;
  private used = 0;

  /**
   * `answer` itself when it may leave in the current workflow task (no await, so it leaves exactly when
   * it would without the budget), or a promise of it that resolves in a later task.
   */
  fit<Answer>(answer: Answer): Answer | Promise<Answer> {
    const later = this.take(jsonBytes(answer));
    return later ? later.then(() => answer) : answer;
  }

  /**
   * Takes `bytes` of the current task: undefined when they fit (the caller goes on without an await, so
   * its commands keep their order), or a promise that resolves in a later task that has room for them.
   */
  take(bytes: number): Promise<void> | undefined {
    return this.room(bytes) ? undefined : this.later(bytes);
  }

  private room(bytes: number): boolean {
    const { historyLength } = workflowInfo();
    if (historyLength !== this.task) {
      this.task = historyLength;
      this.used = 0;
    }
    if (this.used !== 0 && this.used + bytes > taskSendBytes) return false;
    this.used += bytes;
    return true;
  }

  private async later(bytes: number): Promise<void> {
    do await sleep(1);
    while (!this.room(bytes));
  }
}
