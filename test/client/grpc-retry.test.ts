// A call that reaches a workflow while it continues as new is refused by the server with
// RESOURCE_EXHAUSTED "workflow is closing"; the next run takes it a few ms later. The SDK's default
// gRPC retry waits 1 s × 1.7 for any RESOURCE_EXHAUSTED (meant for rate limits), so a message sent to a
// busy thread at its continue-as-new took 1.4–2 s. agents-kit's retry options retry this one refusal
// after ~50 ms and leave every other status as the SDK has it.
import { Client, Connection, defaultGrpcRetryOptions, type BackoffOptions } from '@temporalio/client';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { grpcRetryInterceptor, grpcRetryOptions, refusedWhileClosing } from '../../client/grpc-retry';
import { attachRun, idleAgent, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

type CallStatus = Parameters<BackoffOptions['initialIntervalMs']>[0];
const status = (code: number, details: string): CallStatus => ({ code, details, metadata: undefined! });
const closing = status(8, 'workflow operation can not be applied because workflow is closing');
const jitter = 0.2;

test('only a refusal of a closing workflow is retried sooner; every other status keeps the SDK backoff', () => {
  const ours = grpcRetryOptions();
  const sdk = defaultGrpcRetryOptions();
  expect(refusedWhileClosing(closing)).toBe(true);
  expect(ours.retryableDecider(1, closing)).toBe(true);
  expect(ours.delayFunction(1, closing)).toBeLessThanOrEqual(30 * 1.7 * (1 + jitter));
  expect(sdk.delayFunction(1, closing)).toBeGreaterThanOrEqual(1000 * 1.7 * (1 - jitter));
  // Over its ten attempts it still waits seconds in all, for a run whose close takes that long.
  const total = [1, 2, 3, 4, 5, 6, 7, 8, 9].reduce(
    (sum, attempt) => sum + ours.delayFunction(attempt, closing),
    0,
  );
  expect(total).toBeGreaterThan(5_000);
  for (const other of [status(8, 'namespace rate limit exceeded'), status(14, 'unavailable')]) {
    expect(refusedWhileClosing(other)).toBe(false);
    const base = other.code === 8 ? 1000 : 100;
    for (const attempt of [1, 3]) {
      const delay = ours.delayFunction(attempt, other);
      expect(delay).toBeGreaterThanOrEqual(base * 1.7 ** attempt * (1 - jitter));
      expect(delay).toBeLessThanOrEqual(Math.min(5000, base * 1.7 ** attempt) * (1 + jitter));
    }
  }
  expect(ours.retryableDecider(10, closing)).toBe(false);
  // The caller's own options still apply to the rest.
  const custom = grpcRetryOptions({ initialIntervalMs: () => 7, maxAttempts: 3 });
  expect(custom.delayFunction(1, status(14, 'x'))).toBeLessThanOrEqual(7 * 1.7 * (1 + jitter));
  expect(custom.retryableDecider(3, closing)).toBe(false);
});

/** Each attempt the retry interceptor makes: its request bytes and the status it ended with. */
interface Attempt {
  request: string;
  status: CallStatus;
}

function observer(attempts: Attempt[]): Interceptor {
  return (options, nextCall) => {
    let request = '';
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveStatus(received, nextStatus) {
            attempts.push({ request, status: received });
            nextStatus(received);
          },
        });
      },
      sendMessage(message: Uint8Array, next) {
        request = Buffer.from(message).toString('base64');
        next(message);
      },
    });
  };
}

let temporal: TestTemporal;
afterAll(async () => temporal?.close());

test('messages that meet a thread at its continue-as-new are refused as closing, retried by the interceptor, and each lands once', async () => {
  temporal = await connectTestTemporal();
  const taskQueue = uniqueTaskQueue('grpc-retry');
  await temporal.startWorker({ taskQueue });
  const attempts: Attempt[] = [];
  // The observer sits inside the retry interceptor: it sees every attempt.
  const connection = await Connection.connect({
    address: temporal.address,
    interceptors: [grpcRetryInterceptor(), observer(attempts)],
  });
  try {
    const client = new Client({ connection });
    const service = await attachRun(client, taskQueue, { continueAsNewAfterEvents: 100 });
    const controls = service.rootControls();
    const agent = await controls.spawn(idleAgent('busy'));
    await untilTurns(service, agent.id, 1);
    const refusals = () => attempts.filter((attempt) => refusedWhileClosing(attempt.status));
    // Four senders until two messages have met a continue-as-new (about one in 20–60 does).
    const seqs: number[] = [];
    let sent = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (sent < 1_500 && (sent < 100 || refusals().length < 2)) {
          const index = sent++;
          seqs.push((await controls.sendMessage({ recipient: agent.id, content: `m${index}` })).seq);
        }
      }),
    );
    expect(refusals().length).toBeGreaterThanOrEqual(2);
    // Each landed once: the thread numbered them 1..n without a gap or a repeat.
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: sent }, (_, index) => index + 1));
    for (const refused of refusals()) {
      // The interceptor sent the same request again and it was answered; the caller never saw the refusal.
      const later = attempts.slice(attempts.indexOf(refused) + 1);
      expect(later.find((attempt) => attempt.request === refused.request)?.status.code).toBe(0);
      // The server's own status is the one retried at once (the SDK's default would wait ~1.7 s).
      expect(grpcRetryOptions().delayFunction(1, refused.status)).toBeLessThanOrEqual(
        30 * 1.7 * (1 + jitter),
      );
    }
    await service.shutdown();
  } finally {
    await connection.close();
  }
}, 300_000);
