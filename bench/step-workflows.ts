import {
  allHandlersFinished,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import { startTurnUpdate, stopSignal, turnsDoneQuery } from './messages';
import type { stepActivities } from './step-model';

/** How the bare step runs its two calls. */
export const StepMode = {
  /** Model and tool as (remote) activities: the primitive under an agent step. */
  activities: 'activities',
  /** Both as local activities: the least a step can take on Temporal. */
  local: 'local',
  /** The model as an activity and the tool as a local activity: what fast tools could cost. */
  localTool: 'local-tool',
} as const;
export type StepMode = (typeof StepMode)[keyof typeof StepMode];

const options = { startToCloseTimeout: '1 minute' } as const;
const remote = proxyActivities<typeof stepActivities>(options);
const local = proxyLocalActivities<typeof stepActivities>(options);

/**
 * The bare Temporal turn: an update asks for a turn of `steps` steps and answers at once; each step
 * is a model call, then (until the model answers with text) a tool call, one after the other. Nothing
 * else: no signals, timers or upserts, so its history is the floor of an agent's turn.
 */
export async function benchStepWorkflow(mode: StepMode): Promise<void> {
  const pending: number[] = [];
  let done = 0;
  let stopped = false;
  setHandler(startTurnUpdate, (steps) => {
    pending.push(steps);
    return done + pending.length;
  });
  setHandler(turnsDoneQuery, () => done);
  setHandler(stopSignal, () => void (stopped = true));
  const model = mode === StepMode.local ? local.benchModel : remote.benchModel;
  const tool = mode === StepMode.activities ? remote.benchTool : local.benchTool;
  for (;;) {
    await condition(() => pending.length > 0 || stopped);
    const steps = pending.shift();
    if (steps === undefined) break;
    for (let step = 1; ; step++) {
      const answer = await model({ step, steps });
      if (!answer.toolCall) break;
      await tool(answer.toolCall);
    }
    done++;
  }
  await condition(allHandlersFinished);
}
