import fc from 'fast-check';
import type { AgentLimits } from '../../domain/schemas';

// The commands of the RootRunState model-based property (run-state.property.test.ts) and their generators.

export type LimitName = keyof AgentLimits;
export type Command =
  | {
      type: 'spawn';
      parent: number;
      name?: string;
      task: string;
      limits?: Partial<AgentLimits>;
      requestId?: number;
    }
  | { type: 'end'; thread: number; status: 'completed' | 'failed' | 'cancelled' }
  | { type: 'turn'; thread: number; tokens: number; stale: boolean }
  | { type: 'message'; from: number; to: number }
  | { type: 'take'; by: number }
  | { type: 'revoke'; by: number }
  | { type: 'close' }
  | { type: 'restore' }
  /** The last spawn again, as a caller retrying after a lost reply would send it. */
  | { type: 'retry' };

export const hex = (n: number, lead: string) => `${lead}${n.toString(16).padStart(31, '0')}`;
export const requestIdOf = (n: number) => `request_${hex(n, 'e')}`;
export const at = <Item>(items: readonly Item[], index: number): Item => items[index % items.length]!;

const limitsArbitrary = fc.record(
  {
    maxDepth: fc.integer({ min: 0, max: 3 }),
    maxConcurrent: fc.integer({ min: 1, max: 4 }),
    maxTotal: fc.integer({ min: 1, max: 6 }),
    budgetTokens: fc.integer({ min: 0, max: 120 }),
  },
  { requiredKeys: [] },
);

const index = fc.nat({ max: 40 });
export const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record(
      {
        type: fc.constant('spawn' as const),
        parent: index,
        name: fc.constantFrom('scout', 'writer', 'agent-1', 'agent-2', 'agent-3'),
        task: fc.constantFrom('research', 'summarise'),
        limits: limitsArbitrary,
        requestId: fc.nat({ max: 7 }),
      },
      { requiredKeys: ['type', 'parent', 'task'] },
    ),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('end' as const),
      thread: index,
      status: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      type: fc.constant('turn' as const),
      thread: index,
      tokens: fc.nat({ max: 40 }),
      stale: fc.boolean(),
    }),
  },
  { weight: 8, arbitrary: fc.record({ type: fc.constant('message' as const), from: index, to: index }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('take' as const), by: index }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('revoke' as const), by: index }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('close' as const) }) },
  { weight: 5, arbitrary: fc.record({ type: fc.constant('restore' as const) }) },
  { weight: 6, arbitrary: fc.record({ type: fc.constant('retry' as const) }) },
);

export const grantArbitrary = fc.record({
  maxDepth: fc.integer({ min: 1, max: 4 }),
  maxConcurrent: fc.integer({ min: 1, max: 6 }),
  maxTotal: fc.integer({ min: 1, max: 12 }),
  budgetTokens: fc.integer({ min: 40, max: 300 }),
  spentTokens: fc.nat({ max: 30 }),
});
