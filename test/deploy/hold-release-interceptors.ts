// Workflow code for test/workflows/cancel-while-releasing.test.ts, bundled as one more workflow
// interceptor module beside the library's own: an update `test-hold` that stays in flight until the
// signal `test-let-go`, so a root run that prepares to continue as new cannot finish draining (it waits
// for every handler) and the test can reach it there. Nothing else changes.
import {
  condition,
  defineSignal,
  defineUpdate,
  setHandler,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';

export const holdUpdate = defineUpdate<void>('test-hold');
export const letGoSignal = defineSignal('test-let-go');

export const interceptors: WorkflowInterceptorsFactory = () => {
  let held = true;
  setHandler(holdUpdate, () => condition(() => !held));
  setHandler(letGoSignal, () => void (held = false));
  return {};
};
