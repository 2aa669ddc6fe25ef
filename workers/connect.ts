import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { PayloadCodec } from '@temporalio/common';
import { readFileSync } from 'node:fs';
import { loadCodecKeys } from '../client/codec-keys';
import { createEncryptionCodec, createKeylessCodec } from '../client/encryption-codec';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import type { Tracing } from '../client/tracing';
import type { EnvironmentConfig } from './config';

function connectionOptions(config: EnvironmentConfig) {
  const mtls =
    config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
      ? {
          clientCertPair: {
            crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH),
            key: readFileSync(config.TEMPORAL_TLS_KEY_PATH),
          },
        }
      : undefined;
  const tls = mtls ?? (config.TEMPORAL_TLS === 'true' || config.TEMPORAL_API_KEY ? true : undefined);
  return {
    address: config.TEMPORAL_ADDRESS,
    ...(tls !== undefined ? { tls } : {}),
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/**
 * The encryption codec of the configured keys (`AGENTS_KIT_CODEC_KEYS`), or undefined when none are
 * configured: payloads are then stored as plain JSON (SPEC S3.9).
 */
export function configuredCodec(
  config: Pick<EnvironmentConfig, 'AGENTS_KIT_CODEC_KEYS'>,
): PayloadCodec | undefined {
  const keys = loadCodecKeys(config);
  return keys ? createEncryptionCodec({ keys }) : undefined;
}

/**
 * A client connection to the configured Temporal service (local dev server, cluster or Temporal Cloud),
 * encrypting payloads when `AGENTS_KIT_CODEC_KEYS` is set (SPEC S3.9).
 * `connectTimeoutMs` bounds how long an unreachable server is waited for (the SDK's default is 10 s);
 * with `tracing`, what the client does to a tree is traced (SPEC S11.2).
 */
export async function connectClient(
  config: EnvironmentConfig,
  options: { connectTimeoutMs?: number; tracing?: Tracing | undefined } = {},
): Promise<Client> {
  const connection = await Connection.connect({
    ...connectionOptions(config),
    interceptors: [grpcRetryInterceptor()],
    ...(options.connectTimeoutMs !== undefined ? { connectTimeout: options.connectTimeoutMs } : {}),
  });
  // Without keys, a codec that only turns "Unknown encoding: binary/encrypted" into an error that says
  // to set the keys.
  const codec = configuredCodec(config) ?? createKeylessCodec();
  return new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: { payloadCodecs: [codec] },
    // Loaded only when tracing: a client that does not trace does not load the OpenTelemetry API.
    ...(options.tracing
      ? {
          interceptors: (await import('../client/trace-interceptors')).tracingInterceptors(
            options.tracing.tracer,
          ),
        }
      : {}),
  });
}

/** A worker connection to the same service. */
export async function connectWorker(config: EnvironmentConfig): Promise<NativeConnection> {
  // Loaded here, not at the top: a process that only needs a client does not pay for the worker SDK.
  const { NativeConnection } = await import('@temporalio/worker');
  return NativeConnection.connect(connectionOptions(config));
}
