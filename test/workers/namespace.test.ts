// A namespace the server does not have, given to a worker or a client, is a NotFound KitError that says
// how to create it — not a retryable Integration error around a gRPC status dump. A worker refuses it
// before Temporal's Worker.create, which would otherwise leave its workflow threads running and keep
// the process up after the error was caught.
import { Client } from '@temporalio/client';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ThreadService } from '../../client';
import { projectRoot } from '../helpers/paths';
import { kitErrorOf } from '../helpers/runs';
import { suiteTemporal, testServerAddress } from '../helpers/temporal';

const temporal = suiteTemporal();
const missing = () => `missing-${randomUUID().slice(0, 8)}`;

test('a client on a namespace that does not exist gets NotFound naming it', async () => {
  const namespace = missing();
  const client = new Client({ connection: temporal().client.connection, namespace });
  const error = await kitErrorOf(
    ThreadService.attach(client, { taskQueue: 'q', owner: 'o', root: { task: 't' }, grant: { owner: 'o' } }),
  );
  expect(error.kind).toBe('NotFound');
  expect(error.retryable).toBe(false);
  expect(error.message).toBe(
    `attach: namespace "${namespace}" does not exist on this Temporal server: create it (temporal operator namespace create --namespace ${namespace}) or set TEMPORAL_NAMESPACE to one that does`,
  );
});

test('createAgentWorker on a namespace that does not exist is NotFound, and the process still exits by itself', () => {
  const namespace = missing();
  // A user's app: it catches the error, closes its connection and expects to end.
  const app = `
    const { NativeConnection } = require('@temporalio/worker');
    const { createAgentWorker } = require(${JSON.stringify(join(projectRoot, 'dist', 'workers', 'index.js'))});
    (async () => {
      const connection = await NativeConnection.connect({ address: ${JSON.stringify(testServerAddress())} });
      try {
        await createAgentWorker({ connection, namespace: ${JSON.stringify(namespace)}, taskQueue: 'q' });
        console.log('created');
      } catch (error) {
        console.log(JSON.stringify({ kind: error.kind, message: error.message }));
      }
      await connection.close();
    })();`;
  const result = spawnSync(process.execPath, ['-e', app], {
    cwd: projectRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
  // Killed by the timeout (signal set, no status) if the process had stayed up.
  expect([result.signal, result.status]).toEqual([null, 0]);
  const outcome = JSON.parse(result.stdout.trim().split('\n').pop()!) as { kind: string; message: string };
  expect(outcome.kind).toBe('NotFound');
  expect(outcome.message).toMatch(`namespace "${namespace}" does not exist on this Temporal server`);
}, 90_000);
