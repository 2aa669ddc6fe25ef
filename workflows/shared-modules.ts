// Loaded once per worker thread, before any workflow, and shared by every workflow on that thread
// (the bundle's `preloadModules`, see workers/create-worker.ts). Without it each workflow the worker
// caches instantiates the whole bundle again: ~800 zod schemas, ~18 ms of CPU and ~1.9 MB of heap.
//
// The SDK deep-freezes shared modules so that one workflow cannot leak state into another. zod 4
// finishes a schema on first use (bound methods, derived fields, whether its parser can recurse) by
// writing to it, which a frozen schema refuses. So every schema built here is finished now, before
// the freeze: each lazily built member is read once and each schema parses once.
import { globalConfig } from 'zod/v4/core';

const built: object[] = [];
const previous = globalConfig.postProcessor;
globalConfig.postProcessor = (schema: object) => void built.push(schema);
try {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('./index');
  // Finishing a schema can build more (a member that is itself a schema): those are finished in turn.
  for (let index = 0; index < built.length; index++) {
    const schema = built[index] as { _zod?: object; safeParse?: (value: unknown) => unknown };
    readMembers(schema);
    readMembers(schema._zod);
    // Its parser decides on its first two parses whether it can recurse and then stops changing.
    for (let parse = 0; parse < 2; parse++) attempt(() => schema.safeParse?.(undefined));
  }
} finally {
  globalConfig.postProcessor = previous;
}
built.length = 0;

/** Reads every accessor an object inherits, so each lazily built member becomes the object's own. */
function readMembers(target: object | undefined): void {
  if (!target) return;
  for (
    let proto = Object.getPrototypeOf(target);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key !== 'constructor' && Object.getOwnPropertyDescriptor(proto, key)?.get)
        attempt(() => (target as Record<string, unknown>)[key]);
    }
  }
}

/** A member that cannot be built for a schema (or a parse that throws) is never used on it either. */
function attempt(read: () => unknown): void {
  try {
    read();
  } catch {
    // nothing to finish
  }
}
