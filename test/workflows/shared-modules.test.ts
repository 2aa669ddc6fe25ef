// The worker shares the workflow code between workflows and deep-freezes it (workflows/shared-modules.ts).
// A zod schema that writes to itself on some parse path would then throw there, inside a workflow: a
// signal handler's throw fails the workflow task again and again. This parses good and bad input with
// every schema the domain exports, after freezing them the way the SDK does.
import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Freezes everything reachable through own properties, as the SDK's reusable V8 context does. */
function deepFreeze(value: unknown, seen = new WeakSet<object>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
  if (seen.has(value) || Object.isFrozen(value)) return;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    try {
      deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
    } catch {
      // some values cannot be frozen (typed arrays); the SDK skips them too
    }
  }
  Object.freeze(value);
}

type Schema = { safeParse(input: unknown): { success: boolean } };
const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && '_zod' in value && 'safeParse' in value;

let schemas: [string, Schema][] = [];

beforeAll(() => {
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../workflows/shared-modules');
    const domain = join(__dirname, '../../domain');
    const modules = readdirSync(domain)
      .filter((file) => file.endsWith('.ts'))
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      .map((file) => [file, require(join(domain, file)) as Record<string, unknown>] as const);
    for (const [, exports] of modules) deepFreeze(exports);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    deepFreeze(require('zod'));
    schemas = modules.flatMap(([file, exports]) =>
      Object.entries(exports)
        .filter((entry): entry is [string, Schema] => isSchema(entry[1]))
        .map(([name, schema]): [string, Schema] => [`${file}:${name}`, schema]),
    );
  });
});

test('the domain exports its schemas, and they are frozen', () => {
  expect(schemas.length).toBeGreaterThan(50);
  expect(schemas.every(([, schema]) => Object.isFrozen(schema))).toBe(true);
});

test('frozen schemas parse any input without throwing (they only answer success or issues)', () => {
  const threadId = `thread_${'a'.repeat(32)}`;
  const typed = fc.constantFrom(
    'spawn',
    'send-message',
    'interrupt',
    'turn-start',
    'turn-end',
    'thread-end',
    'message',
    'status',
    'interaction',
    'question',
    'approval',
    'scripted',
    'reply',
  );
  const input = fc.oneof(
    fc.anything(),
    fc.record({ type: typed, threadId: fc.constant(threadId), text: fc.string() }, { requiredKeys: [] }),
    fc.record({ kind: typed, id: fc.constant(threadId), name: fc.string({ maxLength: 50 }) }),
  );
  fc.assert(
    fc.property(input, (value) => {
      for (const [name, schema] of schemas) {
        try {
          schema.safeParse(value);
        } catch (error) {
          throw new Error(`${name} threw on ${JSON.stringify(value)}: ${String(error)}`, { cause: error });
        }
      }
    }),
    { numRuns: 300 },
  );
});
