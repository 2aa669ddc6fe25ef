// `agents-kit worker` with AGENTS_KIT_METRICS_ADDRESS serves Prometheus metrics: Temporal's worker
// metrics, agents-kit's model metrics (calls by outcome, tokens by kind, latency), each tagged with
// the task queue and the model, read here from the endpoint after real model calls to a local
// OpenAI-compatible server: one answered, one refused by the provider; and the workflows' metrics
// (turns by outcome, spawns, refused updates, dropped signals) after that and a raw client's forgeries.
import { freePort } from '../../workers/dev-server';
import { kitCall } from '../../client/errors';
import { startModelWorker, untilOutput } from '../helpers/cli';
import { startOpenAIServer } from '../helpers/openai-server';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { suiteTemporal, uniqueTaskQueue } from '../helpers/temporal';

const temporal = suiteTemporal();

/** The value of the one sample of `name` whose labels include every one of `labels`; undefined if none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const has = Object.fromEntries(
      [...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]),
    );
    if (Object.entries(labels).every(([key, value]) => has[key] === value)) return Number(match[3]);
  }
  return undefined;
}

test('model calls, tokens and Temporal worker metrics are served at AGENTS_KIT_METRICS_ADDRESS', async () => {
  // The first call is answered (40 tokens: 39 in, 1 out); the second is refused (HTTP 400, not retried).
  const server = await startOpenAIServer((_request, index) =>
    index === 0 ? { text: 'counted', tokens: 40 } : { status: 400, error: 'no such thing' },
  );
  const taskQueue = uniqueTaskQueue('metrics');
  const metricsAddress = `127.0.0.1:${await freePort()}`;
  const worker = startModelWorker(temporal().address, taskQueue, server.url, {
    AGENTS_KIT_METRICS_ADDRESS: metricsAddress,
  });
  try {
    await untilOutput(worker, new RegExp(`metrics at http://${metricsAddress}/metrics`));
    const service = await attachRun(temporal().client, taskQueue, {
      root: { task: 'count', name: 'root', kernel: { type: 'model' } },
    });
    const first = await untilTurns(service, service.rootThreadId, 1, 90_000);
    expect(first.latestTurn).toMatchObject({ status: 'completed', result: 'counted' });
    const refused = await service.rootControls().spawn({ task: 'count again', kernel: { type: 'model' } });
    const second = await untilTurns(service, refused.id, 1, 90_000);
    expect(second.latestTurn?.status).toBe('failed');

    const model = { model: 'openai-compatible:test-model', taskQueue };
    const metrics = await eventually(
      async () => (await fetch(`http://${metricsAddress}/metrics`)).text(),
      (text) => sample(text, 'agents_kit_model_calls', { ...model, outcome: 'failed' }) === 1,
      'the refused call in the metrics',
    );
    expect(sample(metrics, 'agents_kit_model_calls', { ...model, outcome: 'completed' })).toBe(1);
    expect(sample(metrics, 'agents_kit_model_tokens', { ...model, kind: 'input' })).toBe(39);
    expect(sample(metrics, 'agents_kit_model_tokens', { ...model, kind: 'output' })).toBe(1);
    expect(sample(metrics, 'agents_kit_model_call_latency_count', { ...model, outcome: 'completed' })).toBe(
      1,
    );
    // The workflows' own (Temporal tags them with the workflow type): the root's turn completed, the
    // spawned agent's failed with the provider's refusal, one thread admitted.
    const root = { taskQueue, workflowType: 'rootRunWorkflow' };
    const agent = { taskQueue, workflowType: 'agentWorkflow' };
    expect(sample(metrics, 'agents_kit_turns', { ...root, outcome: 'completed' })).toBe(1);
    expect(sample(metrics, 'agents_kit_turns', { ...agent, outcome: 'failed' })).toBe(1);
    expect(sample(metrics, 'agents_kit_turn_duration_count', { ...root, outcome: 'completed' })).toBe(1);
    expect(sample(metrics, 'agents_kit_spawns', root)).toBe(1);
    // Temporal's own: the worker's activity and workflow task metrics on this task queue.
    expect(
      sample(metrics, 'temporal_activity_execution_latency_count', {
        activity_type: 'callModel',
        task_queue: taskQueue,
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(metrics, 'temporal_workflow_task_execution_latency_count', {
        workflow_type: 'rootRunWorkflow',
        task_queue: taskQueue,
      }),
    ).toBeGreaterThanOrEqual(1);

    // A raw client's malformed and forged signals are dropped and counted; a malformed update refused.
    const handle = temporal().client.workflow.getHandle(service.rootThreadId);
    await handle.signal<[unknown]>('control-request', null);
    await handle.signal<[unknown]>('thread-event', {
      from: {
        rootId: service.rootThreadId,
        threadId: refused.id,
        lineage: [service.rootThreadId],
        proof: 'e'.repeat(64),
      },
      event: { type: 'turn-start', threadId: refused.id, turn: 2, at: new Date().toISOString() },
    });
    const error = await kitErrorOf(
      kitCall('spawn', () => handle.executeUpdate<unknown, [unknown, unknown]>('spawn', { args: [null, 7] })),
    );
    const dropped = await eventually(
      async () => (await fetch(`http://${metricsAddress}/metrics`)).text(),
      (text) =>
        sample(text, 'agents_kit_signals_dropped', {
          ...root,
          signal: 'thread-event',
          reason: 'unproven',
        }) === 1,
      'the forged thread event in the metrics',
    );
    expect(
      sample(dropped, 'agents_kit_signals_dropped', {
        ...root,
        signal: 'control-request',
        reason: 'malformed',
      }),
    ).toBe(1);
    expect(sample(dropped, 'agents_kit_update_errors', { ...root, update: 'spawn', kind: error.kind })).toBe(
      1,
    );
    await service.shutdown();
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
    await server.close();
  }
}, 180_000);
