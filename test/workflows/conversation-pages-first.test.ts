// SPEC S5.2, S7.3 (patch `pagesBeforeContinuing`): a conversation cuts a burst of spill into pages one
// page per loop, beside the due page's request, and continues as new once the spill is cut.
// Before, it started every page of the spill before asking for one: with a publisher outpacing page
// starts, a receiver waited for seconds (30 s with worker kills) with every item stored (found by the
// outside chaos probe, F14).
import { pageRequestAmongCuts, pagesBurst } from '../helpers/pages-burst';
import { runHistories } from '../helpers/run-histories';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('pages-first', (connected) => (temporal = connected));

test('a burst of spill: the due page is asked for while pages are still being cut, and everything arrives in order', async () => {
  const count = 400;
  const { conversationId, labels } = await pagesBurst(temporal.client, taskQueue, count);
  started.push(conversationId);
  expect(labels).toEqual(Array.from({ length: count }, (_, index) => `item ${index + 3} ${'x'.repeat(40)}`));

  const runs = await Promise.all(
    (await runHistories(temporal.client, conversationId)).map(async ({ runId }) =>
      pageRequestAmongCuts(await temporal.client.workflow.getHandle(conversationId, runId).fetchHistory()),
    ),
  );
  // The run that cut the burst (it continues as new only once its spill is cut).
  const cutting = runs.reduce((most, run) => (run.cuts > most.cuts ? run : most));
  process.stderr.write(`[measure] runs ${runs.length}; the cutting run: ${JSON.stringify(cutting)}\n`);
  expect(cutting.cuts).toBeGreaterThan(40);
  expect(cutting.request).toBeDefined();
  expect(cutting.request!).toBeLessThan(cutting.lastCut);
}, 300_000);
