import { ErrorKind, KitError } from '../domain/errors';
import type { BudgetUnit } from '../domain/run-turns';
import { maxCallTokens } from '../domain/usage';

/** What a thread asks its root for at a time; the root grants a quarter of the least budget left at most. */
export const allowanceChunk = 20_000;

/** What an allowance counts: its grant size, the limit it names, and how a person reads an amount. */
export interface AllowanceUnit {
  /** What the root's `reserve` calls it. */
  name: BudgetUnit;
  chunk: number;
  limit: 'budgetTokens' | 'budgetUsd';
  /** `1234 tokens`, `$0.001234`. */
  shown(amount: number): string;
  /** What a QuotaExceeded's `value` says of an amount (tokens; dollars for micro-dollars). */
  value(amount: number): number;
}

export const tokenUnit: AllowanceUnit = {
  name: 'tokens',
  chunk: allowanceChunk,
  limit: 'budgetTokens',
  shown: (amount) => `${amount} tokens`,
  value: (amount) => amount,
};

/**
 * SPEC S11.3: micro-dollars at the worker's price table, in a subtree with a budget in dollars. A grant
 * of $0.20 covers a few calls of a large model (GPT-4.1 with 10k tokens in and 4k out reserves ~$0.05).
 */
export const microUsdUnit: AllowanceUnit = {
  name: 'microUsd',
  chunk: 200_000,
  limit: 'budgetUsd',
  shown: (amount) => `$${(amount / 1e6).toFixed(6)}`,
  value: (amount) => amount / 1e6,
};

/** What a thread holds to spend, and what it spent past that (carried through continue-as-new). */
export interface TokenAllowanceState {
  allowance: number;
  owed: number;
  /** Spent of the allowance and not reported to the root yet. */
  unreported: number;
  /** The root granted less than asked last time: refills wait until the allowance is spent. */
  scarce?: boolean | undefined;
  /** The latest call's reservation (with `callSized`), which refills are sized by. */
  lastCall?: number | undefined;
}

/** How an allowance behaves beyond its budget's unit. */
export interface AllowanceOptions {
  unit?: AllowanceUnit;
  /**
   * Whether a refused call gives what the thread still holds back to the root, so threads still
   * running may spend it (workflows/patches.ts `refusedCallGivesBack`); absent: it keeps it.
   */
  givesBack?: () => boolean;
  /** Refills sized by the calls' reservations (the tree's `callSizedAllowance`, workflows/patches.ts). */
  callSized?: boolean;
}

/**
 * A thread's share of its root's token budget (SPEC S6.4), or of its dollar budget (SPEC S11.3, in
 * micro-dollars: `unit`), so a model call costs no round trip to the
 * root: tokens are spent from the allowance the root set aside, and refilled in the background before
 * they run out. Once the allowance is used up the thread asks the root on the spot, and a spent budget
 * ends the turn with QuotaExceeded before the next model call starts.
 */
export class TokenAllowance {
  private refilling: Promise<void> | undefined;
  private exhausted: KitError | undefined;

  constructor(
    private readonly reserve: (request: {
      tokens: number;
      owed: number;
      spent: number;
      need?: number;
      needMayPass?: true;
      giveBack?: number;
    }) => Promise<{
      granted: number;
      /** The least budget left on the way up once this grant is held (below 0: it went past one). */
      remaining?: number;
    }>,
    readonly state: TokenAllowanceState,
    private readonly track: (work: Promise<void>) => void,
    private readonly options: AllowanceOptions = {},
  ) {}

  private get unit(): AllowanceUnit {
    return this.options.unit ?? tokenUnit;
  }

  /**
   * What a refill asks for: a grant, or with `callSized` four of the latest call's reservations if that
   * is more, so a thread whose calls reserve more than a grant (a long transcript) still makes several
   * calls per refill, none of them waiting for the root.
   */
  private get wanted(): number {
    const latest = this.options.callSized ? (this.state.lastCall ?? 0) : 0;
    return Math.max(this.unit.chunk, 4 * latest);
  }

  /**
   * Asks for more in the background when the allowance is below half a full grant (a turn is about to
   * call the model). Not once the root grants less than asked: the budget is nearly used up, and each
   * further grant is asked for when the last is spent, so every call is still checked against it.
   */
  prefetch(): void {
    const low = this.state.allowance < this.wanted / 2 && !this.state.scarce;
    if ((low || this.state.allowance === 0) && !this.refilling && !this.exhausted) {
      this.refilling = this.refill().then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof KitError && error.kind === ErrorKind.QuotaExceeded) this.exhausted = error;
        },
      );
      const done = this.refilling.finally(() => (this.refilling = undefined));
      this.track(done);
    }
  }

  /** Spends `tokens`; throws QuotaExceeded when the budget above is used up. */
  async charge(tokens: number): Promise<{ remaining: number }> {
    const spent = Math.min(tokens, this.state.allowance);
    this.state.allowance -= spent;
    this.state.unreported += spent;
    this.state.owed += tokens - spent;
    if (this.state.allowance > 0 && this.state.owed === 0) {
      this.prefetch();
      return { remaining: this.state.allowance };
    }
    // Used up: ask the root now, so the next model call starts only within the budget.
    if (this.refilling) await this.refilling;
    if (this.state.allowance > 0 && this.state.owed === 0) return { remaining: this.state.allowance };
    this.exhausted = undefined;
    await this.refill();
    if (this.state.allowance <= 0)
      throw new KitError(
        ErrorKind.QuotaExceeded,
        `the ${this.unit === tokenUnit ? 'token' : 'dollar'} budget has no room left for another model call`,
        { limit: this.unit.limit },
      );
    return { remaining: this.state.allowance };
  }

  /**
   * SPEC S11.3: holds `tokens` for one model call before it starts. What the thread holds is used first;
   * short of it, the root is asked for at least the rest, and QuotaExceeded stands (nothing held, no call)
   * when a budget on the way up has no room for it: no call in flight can pass a budget.
   */
  async reserveCall(tokens: number): Promise<void> {
    if (this.options.callSized) this.state.lastCall = tokens;
    if (this.state.allowance < tokens || this.state.owed > 0) {
      if (this.refilling) await this.refilling;
      if (this.state.allowance < tokens || this.state.owed > 0) {
        this.exhausted = undefined;
        try {
          await this.refill(Math.max(1, tokens - this.state.allowance));
        } catch (error) {
          if (!(error instanceof KitError && error.kind === ErrorKind.QuotaExceeded)) throw error;
        }
      }
      if (this.state.allowance < tokens) {
        const left = this.state.allowance;
        this.giveBack();
        throw new KitError(
          ErrorKind.QuotaExceeded,
          this.unit === tokenUnit
            ? `the token budget has no room for another model call: it may use ${tokens} tokens (its maximum output and its input's estimate), and ${left} are left to this thread`
            : `the dollar budget has no room for another model call: it may cost ${this.unit.shown(tokens)} (its maximum output and its input's estimate at the worker's prices), and ${this.unit.shown(left)} is left to this thread`,
          { limit: this.unit.limit, value: this.unit.value(tokens) },
        );
      }
    }
    this.state.allowance -= tokens;
  }

  /**
   * SPEC S6.4: charges `tokens` a turn reports at once rather than uses as it goes (a scripted reply's).
   * What the thread holds is used first; short of it, the root is asked for the rest, which it grants
   * whole while every budget on the way up has room left, even past it, and refuses once one is used up:
   * QuotaExceeded is thrown, nothing of the reply counted, and what the thread holds is given back.
   * Granted past what was left, the reply counts and must end its turn: its QuotaExceeded is answered
   * (`endsTurn`), not thrown. So a tree passes its budget by less than one reply, and a reply that fits
   * (exactly, too) completes whatever the others did meanwhile.
   */
  async chargeReported(tokens: number): Promise<{ endsTurn?: KitError }> {
    let left: number | undefined;
    if (this.state.allowance < tokens || this.state.owed > 0) {
      if (this.refilling) await this.refilling;
      if (this.state.allowance < tokens || this.state.owed > 0) {
        this.exhausted = undefined;
        try {
          left = await this.refill(Math.max(1, tokens - this.state.allowance), true);
        } catch (error) {
          if (error instanceof KitError && error.kind === ErrorKind.QuotaExceeded) this.giveBack();
          throw error;
        }
      }
    }
    this.state.allowance -= tokens;
    this.state.unreported += tokens;
    this.prefetch();
    if (left === undefined || left >= 0) return {};
    return {
      endsTurn: new KitError(
        ErrorKind.QuotaExceeded,
        `the token budget is used up: this reply's ${tokens} tokens counted, ${-left} past what was left`,
        { limit: this.unit.limit },
      ),
    };
  }

  /** The call that held `reserved` used `used`: the rest is the thread's again, any excess owed. */
  settleCall(reserved: number, rawUsed: number): void {
    // A call counts at most what any one can (domain/usage.ts), so what is owed fits its operation.
    const used = Math.min(rawUsed, 2 * maxCallTokens);
    const within = Math.min(reserved, used);
    this.state.allowance += reserved - within;
    this.state.unreported += within;
    this.state.owed += used - within;
    this.prefetch();
  }

  /** What the thread gives back when it ends. */
  get unused(): number {
    return this.state.allowance;
  }

  /** What it spent of its allowance since it last said, for a report to the root (then reset). */
  takeUnreported(): number {
    const spent = this.state.unreported;
    this.state.unreported = 0;
    return spent;
  }

  /**
   * A call was refused: the turn ends with QuotaExceeded, and what the thread holds (less than one call
   * of its) would stay unspent, counted as used, until the thread ends. Given back in the background, it
   * lets the threads still running spend it, so a tree's budget is used up to what one call holds
   * rather than one call per thread.
   */
  private giveBack(): void {
    const amount = this.state.allowance;
    if (amount <= 0 || this.refilling || !this.options.givesBack?.()) return;
    this.state.allowance = 0;
    const spent = this.takeUnreported();
    // Not taken back if the root cannot be told: it still counts the amount as held (used), so the
    // budget is under-spent by it, never passed.
    const given = this.reserve({ tokens: 0, owed: 0, spent, giveBack: amount }).then(
      () => undefined,
      () => undefined,
    );
    this.refilling = given;
    this.track(given.finally(() => (this.refilling = undefined)));
  }

  /** Asks the root for a grant; returns what it said is left once the grant is held (below 0: past it). */
  private async refill(need?: number, needMayPass?: true): Promise<number | undefined> {
    const owed = this.state.owed;
    const spent = this.takeUnreported();
    this.state.owed = 0;
    try {
      const { granted, remaining } = await this.reserve({
        tokens: Math.max(this.wanted, need ?? 0),
        owed,
        spent,
        ...(need === undefined ? {} : { need }),
        ...(needMayPass ? { needMayPass } : {}),
      });
      this.state.allowance += granted;
      this.state.scarce = granted < Math.max(this.wanted, need ?? 0);
      return remaining;
    } catch (error) {
      // A refused reservation has charged what was owed (that is what used the budget up); any other
      // failure has not, so it stays owed.
      if (!(error instanceof KitError && error.kind === ErrorKind.QuotaExceeded)) {
        this.state.owed += owed;
        this.state.unreported += spent;
      }
      throw error;
    }
  }
}

/** An allowance as one side of a model call's hold (workflows/call-budget.ts). */
export const allowanceHolder = (allowance: TokenAllowance) => ({
  reserve: (amount: number) => allowance.reserveCall(amount),
  settle: (reserved: number, used: number) => allowance.settleCall(reserved, used),
});
