import fc from 'fast-check';
import { newRun, propertyParameters } from '../helpers/run-state';
import { commandArbitrary, grantArbitrary } from './run-state-commands';
import { checkInvariants } from './run-state-invariants';
import type { Model } from './run-state-model';
import { step } from './run-state-steps';

/**
 * Model-based property of RootRunState: random command sequences run against the real state and a
 * deliberately simple model (a list of threads with parent links, counted from scratch each time).
 */

test('random command sequences keep every counter exact, every limit respected and every rejection side-effect free', () => {
  fc.assert(
    fc.property(
      grantArbitrary,
      fc.stringMatching(/^[0-9a-f]{31}$/),
      fc.array(commandArbitrary, { maxLength: 50, size: 'max' }),
      (grant, rootHex, commands) => {
        let state = newRun(grant, { rootThreadId: `thread_a${rootHex}` });
        const model: Model = {
          threads: [
            {
              id: state.rootId,
              parentId: null,
              depth: 0,
              name: 'root',
              path: '/root',
              terminal: false,
              tokens: 0,
              turnsCompleted: 0,
              limits: {
                maxDepth: grant.maxDepth,
                maxConcurrent: grant.maxConcurrent,
                maxTotal: grant.maxTotal,
                budgetTokens: grant.budgetTokens,
              },
            },
          ],
          requests: new Map(),
          open: true,
          revoked: false,
          spentTokens: grant.spentTokens,
          seq: new Map(),
          rootMailbox: [],
          nextId: 1,
        };
        checkInvariants(state, model);
        for (const command of commands) {
          state = step(state, model, command);
          checkInvariants(state, model);
        }
      },
    ),
    propertyParameters(300),
  );
});
