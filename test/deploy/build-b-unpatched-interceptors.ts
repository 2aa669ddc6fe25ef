// The rolling-deploy test's control: build B's change without its `patched` guard. Replaying a history
// that build A recorded with it must fail as nondeterministic, which proves the test would catch an
// unpatched change (test/workflows/rolling-deploy.test.ts).
import { upsertMemo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        upsertMemo({ deployBuild: 'B' });
        return next(input);
      },
    },
  ],
});
