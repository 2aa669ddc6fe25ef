/** One cached value (or the promise of it) and when it stops counting. */
interface Entry<Value> {
  value: Promise<Value>;
  expiresAt: number;
}

/**
 * A bounded, expiring map of promises with one load in flight per key (SPEC S11.1: a server's tool list
 * is fetched once per turn, however many model calls and tool calls the turn makes). A failed load is
 * kept for `failureTtlMs` only, so a step of the same turn does not wait on a dead server again, and the
 * next turn tries afresh. The oldest entries go first once `maxEntries` are kept.
 */
export class TurnCache<Value> {
  private readonly entries = new Map<string, Entry<Value>>();

  constructor(
    private readonly options: {
      maxEntries: number;
      ttlMs: number;
      failureTtlMs: number;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The value of `key`, loading it with `load` when it is missing or expired. */
  get(key: string, load: () => Promise<Value>): Promise<Value> {
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) {
      // Most recently used last, so the map's first entries are the ones to drop.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    const value = load();
    const fresh: Entry<Value> = { value, expiresAt: now + this.options.ttlMs };
    this.entries.delete(key);
    this.entries.set(key, fresh);
    value.catch(() => {
      if (this.entries.get(key) === fresh) fresh.expiresAt = this.now() + this.options.failureTtlMs;
    });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return value;
  }

  /** The value of `key` when it is cached and fresh (no load). */
  peek(key: string): Promise<Value> | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > this.now() ? entry.value : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * A bounded map from key to its latest value (the oldest keys go first): which turn a thread is on,
 * and each server's last good tool list.
 */
export class LatestMap<Value> {
  private readonly entries = new Map<string, Value>();

  constructor(private readonly maxEntries: number) {}

  set(key: string, value: Value): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.maxEntries)
      this.entries.delete(this.entries.keys().next().value as string);
  }

  get(key: string): Value | undefined {
    return this.entries.get(key);
  }
}
