// SPEC S5.2, S7.3 (patch `pageTrafficBeforeContinuing`): a conversation due to continue as new, its spill
// cut, asks for no more pages and continues once its page traffic has landed. Before, the answer of the
// page it had just asked for, or the end of a page it had started, often arrived while the run continued:
// the task failed (UnhandledCommand), the worker replayed the run from its start, and the server refused
// the receiver's polls meanwhile, which the client retried after a second or more (found from outside: a
// receiver of 300 paged items stalled 1.5–5 s at a continue-as-new, 6 failed tasks in each read).
import { pagedBacklogRead } from '../helpers/pages-burst';
import { runHistories } from '../helpers/run-histories';
import { endingRaces, failedTasks } from '../helpers/task-answers';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('quiet-continue', (connected) => (temporal = connected));

test('a paged backlog read across many continue-as-new: no run ends while its page traffic is under way', async () => {
  const count = 150;
  const { conversationId, labels } = await pagedBacklogRead(temporal.client, taskQueue, count);
  started.push(conversationId);
  expect(labels).toEqual(Array.from({ length: count }, (_, index) => `item ${index} ${'x'.repeat(40)}`));

  const runs = await runHistories(temporal.client, conversationId);
  const failed = await Promise.all(
    runs.map(async ({ runId }) => {
      const events =
        (await temporal.client.workflow.getHandle(conversationId, runId).fetchHistory()).events ?? [];
      return [...failedTasks(events), ...endingRaces(events)].map((failure) => `${runId} ${failure}`);
    }),
  );
  process.stderr.write(
    `[measure] runs ${runs.length}, events ${runs.reduce((sum, run) => sum + run.events, 0)}\n`,
  );
  expect(runs.length).toBeGreaterThan(3);
  expect(failed.flat()).toEqual([]);
}, 300_000);
