import { sleep, workflowInfo } from '@temporalio/workflow';
import { jsonBytes } from '../domain/bytes';

/**
 * Bytes of update answers one workflow task may carry. The task's whole answer to the server (every
 * command and update result in it) must stay under 4 MiB, or the task fails on every attempt and the
 * workflow is stuck: sixteen subscribers of a thread whose turn ends with a 256 KiB result would pass it
 * in one task. Child starts are bounded apart (thread-starter's `startBytesInFlight`), so both fit with room.
 */
export const answerBytesPerTask = 768 * 1024;

/**
 * SPEC S3.10: answers that could together pass a workflow task's limit leave in later tasks. The first
 * answer of a task always goes (one answer is bounded by the payload limit); past the budget, a handler
 * waits one timer, which starts a new task. A task is told apart by the history length it started at,
 * the same in every activation of the task and on replay.
 */
export class AnswerBudget {
  private task = -1;
  private used = 0;

  /**
   * `answer` itself when it may leave in the current workflow task (no await, so it leaves exactly when
   * it would without the budget), or a promise of it that resolves in a later task.
   */
  fit<Answer>(answer: Answer): Answer | Promise<Answer> {
    const bytes = jsonBytes(answer);
    return this.room(bytes) ? answer : this.later(answer, bytes);
  }

  private room(bytes: number): boolean {
    const { historyLength } = workflowInfo();
    if (historyLength !== this.task) {
      this.task = historyLength;
      this.used = 0;
    }
    if (this.used !== 0 && this.used + bytes > answerBytesPerTask) return false;
    this.used += bytes;
    return true;
  }

  private async later<Answer>(answer: Answer, bytes: number): Promise<Answer> {
    do await sleep(1);
    while (!this.room(bytes));
    return answer;
  }
}
