// Workflow code of a build newer than the library's, for test/workflows/newer-build-input.test.ts,
// bundled as one more workflow interceptor module beside the library's own. It knows one input field the
// library does not, `fromANewerBuild`: it takes it out of the input and runs the library's code with the
// rest, as a build that added the field would.
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** The input field only this build knows. */
export const newerField = 'fromANewerBuild';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const [first, ...rest] = input.args;
        if (typeof first !== 'object' || first === null || !(newerField in first)) return next(input);
        const known: Record<string, unknown> = { ...(first as Record<string, unknown>) };
        delete known[newerField];
        return next({ ...input, args: [known, ...rest] });
      },
    },
  ],
});
