import {
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type BackoffOptions,
  type GrpcRetryOptions,
} from '@temporalio/client';
import { objectInput } from '../domain/errors';

type CallStatus = Parameters<BackoffOptions['initialIntervalMs']>[0];

const resourceExhausted = 8;

/**
 * The server's refusal of a call that reached a run while it was continuing as new (or ending): the
 * next run takes the call as soon as it exists, a few milliseconds later. Temporal sends it as
 * RESOURCE_EXHAUSTED, which the SDK's default retry waits out for 1.7 s (1 s × 1.7, meant for rate
 * limits).
 */
export const refusedWhileClosing = (status: CallStatus): boolean =>
  status.code === resourceExhausted && /workflow is closing/i.test(status.details);

/**
 * Temporal's gRPC retry options (`defaultGrpcRetryOptions`, same attempts, factor and jitter) with one
 * change: a call refused because its workflow was continuing as new is retried after ~50 ms instead of
 * ~1.7 s. A long-lived workflow of agents-kit continues as new every few thousand events, so under
 * steady traffic about one call per continue-as-new meets this refusal. `options` as the SDK's.
 */
export function grpcRetryOptions(rawOptions: Partial<BackoffOptions> = {}): GrpcRetryOptions {
  const options = objectInput(rawOptions, 'gRPC retry options');
  const initial =
    options.initialIntervalMs ?? ((status: CallStatus) => (status.code === resourceExhausted ? 1000 : 100));
  return defaultGrpcRetryOptions({
    ...options,
    initialIntervalMs: (status) => (refusedWhileClosing(status) ? 30 : initial(status)),
  });
}

/**
 * The gRPC retry interceptor to give the `Connection` of a client that uses agents-kit (it replaces the
 * SDK's default one, {@link grpcRetryOptions}). Without it a message, an interrupt or a receive that
 * meets a thread or conversation at its continue-as-new waits about 1.7 s more.
 *
 * @example
 * import { Client, Connection } from '@temporalio/client';
 * import { grpcRetryInterceptor } from 'agents-kit';
 * const connection = await Connection.connect({ address, interceptors: [grpcRetryInterceptor()] });
 * const client = new Client({ connection });
 */
export const grpcRetryInterceptor = (
  options: Partial<BackoffOptions> = {},
): ReturnType<typeof makeGrpcRetryInterceptor> => makeGrpcRetryInterceptor(grpcRetryOptions(options));
