import { condition, sleep } from '@temporalio/workflow';

/**
 * Waits with a deadline whose timer outlives the wait that started it. `condition(fn, timeout)` starts
 * a timer per wait and cancels it when `fn` comes true: two events and a billable action for every wait
 * that ends early — every turn of a busy thread, every long-poll receive that an item answers. Here a
 * wait whose deadline is later than a running timer waits on that timer and, when it fires early for
 * this wait, starts one for the rest; waits that keep ending early start one timer per timeout.
 * A timer is cancelled only with the workflow, which then ends.
 */
export class KeptTimer {
  private pending: { firesAt: number } | undefined;

  /** Resolves true once `done()` holds, or false once the time is `deadline` (epoch ms). */
  async waitUntil(deadline: number, done: () => boolean): Promise<boolean> {
    for (;;) {
      if (done()) return true;
      if (Date.now() >= deadline) return false;
      // A timer that would fire after this deadline is left to fire on its own.
      if (!this.pending || this.pending.firesAt > deadline) this.start(deadline - Date.now());
      const timer = this.pending;
      await condition(() => done() || this.pending !== timer);
    }
  }

  private start(ms: number): void {
    const timer = { firesAt: Date.now() + ms };
    this.pending = timer;
    const fired = () => {
      if (this.pending === timer) this.pending = undefined;
    };
    void sleep(ms).then(fired, fired);
  }
}
