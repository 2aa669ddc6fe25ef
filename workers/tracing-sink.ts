import type { InjectedSinks } from '@temporalio/worker';
import { tracingSinkName } from '../domain/trace-context';
import type { Tracing } from '../client/tracing';
import type { TracingSinks } from '../workflows/workflow-tracer';

/**
 * SPEC S11.2: the sink agents-kit's workflow interceptors export finished spans through. A worker
 * registers it whether or not it traces (every agents-kit bundle calls it); without `tracing` the spans
 * are dropped. Never called while history is replayed, so a replayed workflow exports nothing twice.
 */
export function tracingSinks(tracing: Tracing | undefined): InjectedSinks<TracingSinks> {
  return {
    [tracingSinkName]: {
      export: {
        fn: (info, spans) =>
          tracing?.exportWorkflowSpans(
            {
              workflowId: info.workflowId,
              workflowType: info.workflowType,
              namespace: info.namespace,
              taskQueue: info.taskQueue,
            },
            spans,
          ),
        callDuringReplay: false,
      },
    },
  };
}
