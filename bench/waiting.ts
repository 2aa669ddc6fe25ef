import { setTimeout as delay } from 'node:timers/promises';

/** A promise with its settlers; a rejection nobody awaits yet is not an unhandled one. */
export interface Deferred<Value> {
  promise: Promise<Value>;
  resolve(value: Value): void;
  reject(error: Error): void;
}
export function deferred<Value>(): Deferred<Value> {
  let resolve!: (value: Value) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<Value>((done, fail) => ((resolve = done), (reject = fail)));
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function within<Value>(promise: Promise<Value>, what: string, ms = 30_000): Promise<Value> {
  const timeout = new AbortController();
  try {
    return await Promise.race([
      promise,
      delay(ms, undefined, { signal: timeout.signal }).then(() => {
        throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
      }),
    ]);
  } finally {
    timeout.abort();
  }
}
