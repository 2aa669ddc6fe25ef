// Workflow code of the rolling-deploy test's build B (test/workflows/rolling-deploy.test.ts), bundled as
// one more workflow interceptor module beside the library's own. Its change: every workflow run that B
// starts records which build started it in its memo (an upsert, so a command that build A's histories do
// not have), guarded by `patched` as SPEC S7.6 asks of every change after v1. A run that build A started
// replays on B down the old path (no marker in its history), a run that B starts takes the new one.
import { patched, upsertMemo, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** The patch id of build B's change. */
export const buildBPatch = 'agents-kit-test-deploy-build-b';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        if (patched(buildBPatch)) upsertMemo({ deployBuild: 'B' });
        return next(input);
      },
    },
  ],
});
