import { condition, setHandler } from '@temporalio/workflow';
import { z } from 'zod';
import type { ThreadChange, ThreadChanges, WatchSnapshot } from '../domain/control';
import { parseInput } from '../domain/errors';
import { carriedResultBytes, clipOutcome } from '../domain/carry-bounds';
import { firstTurnUpdate, watchThreadUpdate } from '../domain/messages';
import { isTerminal, type AgentThread, type TurnOutcome } from '../domain/schemas';
import { TaskBudget } from './task-budget';
import { longPollMs, PollSlots } from './poll-slots';
import { guarded } from './failures';
import type { ThreadAuthority } from './thread-authority';

/** How many recent changes a thread keeps for subscribers that fall behind. */
const changeLogLimit = 64;
/**
 * How much of an older change's turn result is kept, in bytes of JSON: the log travels in the thread's
 * continue-as-new input, and 64 long model answers would pass Temporal's 2 MiB limit. The latest change
 * keeps it all while the run lasts, and {@link carriedResultBytes} of it through continue-as-new.
 */
const olderResultBytes = 1_024;

const withClippedResult = (
  change: ThreadChange,
  maxBytes = olderResultBytes,
  what = 'an older change',
): ThreadChange =>
  change.latestTurn ? { ...change, latestTurn: clipOutcome(change.latestTurn, maxBytes, what) } : change;

/**
 * A thread's observable history for subscribers (SPEC S4.5): every status or turn change gets a version;
 * `watch-thread` long-polls for versions after the caller's, `first-turn` waits for the retained first
 * turn. Lives in the thread's own workflow, so subscribers never load the root run.
 */
export class ThreadWatch {
  private changes: ThreadChange[];
  private firstTurn: TurnOutcome | undefined;
  private releasing = false;

  constructor(
    snapshot?: WatchSnapshot,
    /** SPEC S3.10: many subscribers answered at once must not pass the task's limit. */
    private readonly answers = new TaskBudget(),
    /** Long-polls take one of the workflow's few update slots each (SPEC S3.10). */
    private readonly slots = new PollSlots(),
  ) {
    this.changes = [...(snapshot?.changes ?? [])];
    this.firstTurn = snapshot?.firstTurn;
  }

  get version(): number {
    return this.changes.at(-1)?.version ?? 0;
  }

  /** Records the thread's current state if it changed. */
  record(thread: AgentThread): void {
    const last = this.changes.at(-1);
    if (thread.firstTurn && !this.firstTurn) this.firstTurn = thread.firstTurn;
    if (
      last &&
      last.status === thread.status &&
      last.turnsStarted === thread.turnsStarted &&
      last.turnsCompleted === thread.turnsCompleted
    )
      return;
    const change: ThreadChange = {
      version: this.version + 1,
      status: thread.status,
      turnsStarted: thread.turnsStarted,
      turnsCompleted: thread.turnsCompleted,
      ...(thread.latestTurn ? { latestTurn: thread.latestTurn } : {}),
      at: thread.updatedAt,
    };
    // Every change but the latest keeps only the start of its turn's result (clipping is idempotent).
    this.changes = [
      ...this.changes.slice(1 - changeLogLimit).map((older) => withClippedResult(older)),
      change,
    ];
  }

  /** Ends every pending poll now (their callers poll again, on the next run after continue-as-new). */
  release(): void {
    this.releasing = true;
  }

  /** The run stays after all (a cancel request while it released): polls wait again. */
  stay(): void {
    this.releasing = false;
  }

  /** Registers the `watch-thread` and `first-turn` updates, for callers `authority` admits. */
  register(authority: ThreadAuthority): void {
    const checkCaller = (capability: unknown) => authority.checkMayWatch(authority.caller(capability));
    setHandler(
      watchThreadUpdate,
      guarded((afterVersion: number) =>
        this.slots.hold(async (): Promise<ThreadChanges> => {
          const terminal = () => this.changes.some((change) => isTerminal(change.status));
          await condition(() => this.version > afterVersion || terminal() || this.releasing, longPollMs);
          const changes = this.changes.filter((change) => change.version > afterVersion);
          return this.answers.fit({ changes, terminal: terminal(), resume: this.releasing });
        }),
      ),
      {
        validator: guarded((afterVersion: unknown, capability: unknown) => {
          parseInput(z.number().int().min(0), afterVersion, 'afterVersion');
          checkCaller(capability);
          this.slots.check('watch-thread');
        }),
      },
    );
    setHandler(
      firstTurnUpdate,
      guarded(() =>
        this.slots.hold(async (): Promise<TurnOutcome | null> => {
          await condition(
            () =>
              this.firstTurn !== undefined ||
              this.changes.some((change) => isTerminal(change.status)) ||
              this.releasing,
            longPollMs,
          );
          return this.answers.fit(this.firstTurn ?? null);
        }),
      ),
      {
        validator: guarded((capability: unknown) => {
          checkCaller(capability);
          this.slots.check('first-turn');
        }),
      },
    );
  }

  snapshot(): WatchSnapshot {
    // What travels keeps {@link carriedResultBytes} of the latest and the first turn's results.
    const changes = this.changes.map((change, index, all) =>
      index === all.length - 1
        ? withClippedResult(change, carriedResultBytes, 'a continue-as-new')
        : withClippedResult(change),
    );
    const firstTurn = this.firstTurn && clipOutcome(this.firstTurn, carriedResultBytes, 'a continue-as-new');
    return { changes, ...(firstTurn ? { firstTurn } : {}) };
  }
}
