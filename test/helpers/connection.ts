import { Connection, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import { grpcRetryOptions } from '../../client/grpc-retry';

/**
 * `Connection.connect` for tests, with a close() that is safe while calls are being retried.
 *
 * Retried as agents-kit's clients are (`grpcRetryOptions`). The SDK retries a failed call (UNAVAILABLE,
 * RESOURCE_EXHAUSTED, …) from a timer. When the connection is closed before that timer fires, the timer
 * throws "Channel has been shut down" out of nothing, and jest fails whichever test file its worker
 * process runs then (codec-web-ui once took the blame for a load test that ran before it). This
 * connection schedules no retry once close() is called, and close() first waits until the retries
 * already scheduled have started (at most the SDK's 5 s backoff, +20%).
 */
export async function connectTest(options: ConnectionOptions): Promise<Connection> {
  const retries = grpcRetryOptions();
  let closing = false;
  let lastRetryAt = 0;
  const connection = await Connection.connect({
    ...options,
    interceptors: [
      makeGrpcRetryInterceptor({
        retryableDecider: (attempt, status) => !closing && retries.retryableDecider(attempt, status),
        delayFunction: (attempt, status) => {
          const delay = retries.delayFunction(attempt, status);
          lastRetryAt = Math.max(lastRetryAt, Date.now() + delay);
          return delay;
        },
      }),
    ],
  });
  const close = connection.close.bind(connection);
  connection.close = async () => {
    closing = true;
    const wait = lastRetryAt - Date.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait + 50));
    await close();
  };
  return connection;
}
