import { jsonBytes } from '../domain/bytes';
import type { ControlRequest, OutboxItem } from '../domain/control';
import { carryBudgetBytes } from '../domain/run-snapshot';
import type { RecentAnswer } from '../domain/recent-answers';
import type { RunLifetime } from './run-lifetime';

/** What a root run's predecessor carried into it: requests, side effects and recent answers. */
export type CarriedIn = { queued: ControlRequest[]; outbox: OutboxItem[]; recent?: RecentAnswer[] };

/**
 * What a root run keeps for its next run while it releases (SPEC S3.10): the tree's control requests and
 * its own side effects, kept only while they fit {@link carryBudgetBytes} together. Past the budget they
 * are handled in this run instead, before it continues as new: eight legal 440 kB spawns carried
 * together made an input over 2 MiB, and the server terminated the root. So a steady stream of requests
 * can never keep the run from continuing as new, nor make its input too large.
 */
export class RootCarry {
  readonly queued: ControlRequest[] = [];
  readonly outbox: OutboxItem[] = [];
  private bytes = 0;

  constructor(private readonly lifetime: RunLifetime) {}

  /** Keeps a request for the next run: true when the run is releasing and it fits; false: answer it now. */
  keepRequest(request: ControlRequest): boolean {
    return this.keep(request) && this.queued.push(request) > 0;
  }

  /** Keeps a side effect for the next run: true when the run is releasing and it fits; false: do it now. */
  keepEffect(item: OutboxItem): boolean {
    return this.keep(item) && this.outbox.push(item) > 0;
  }

  /** What is kept, as the next run's input carries it. */
  kept(): { queued: ControlRequest[]; outbox: OutboxItem[] } {
    return { queued: [...this.queued], outbox: [...this.outbox] };
  }

  /**
   * The run stays after all (a cancel request while it released, SPEC S3.5): nothing more is kept, the
   * side effects kept are `perform`ed now, and the requests kept are handed back to be answered.
   */
  giveBack(perform: (item: OutboxItem) => void): ControlRequest[] {
    this.lifetime.stay();
    this.bytes = 0;
    for (const item of this.outbox.splice(0)) perform(item);
    return this.queued.splice(0);
  }

  private keep(value: ControlRequest | OutboxItem): boolean {
    if (!this.lifetime.releasing) return false;
    const bytes = jsonBytes(value);
    if (this.bytes + bytes > carryBudgetBytes) return false;
    this.bytes += bytes;
    return true;
  }
}
