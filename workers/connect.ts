import { Client, Connection, ServiceError, isGrpcServiceError } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { PayloadCodec } from '@temporalio/common';
import { readFileSync } from 'node:fs';
import { ErrorKind, KitError } from '../domain/errors';
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
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const connection = await Connection.connect({
    ...connectionOptions(config),
    interceptors: [grpcRetryInterceptor()],
    connectTimeout: connectTimeoutMs,
  });
  await ensureTemporal(connection, Date.now() + connectTimeoutMs);
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

/** gRPC's status for a method the server does not have. */
const unimplemented = 12;

/**
 * Fails unless what answered the connection is Temporal. `Connection.connect` takes UNIMPLEMENTED from
 * GetSystemInfo for a Temporal server too old to have it and carries on, but every server this SDK
 * supports has it: that answer comes from something else (an HTTP/2 proxy or web server answering
 * 404), and the first real call would then fail with a message that names no address.
 */
async function ensureTemporal(connection: Connection, deadline: number): Promise<void> {
  try {
    await connection.withDeadline(deadline, () => connection.workflowService.getSystemInfo({}));
  } catch (error) {
    if (!isGrpcServiceError(error) || error.code !== unimplemented) throw error;
    throw new ServiceError(notTemporal, { cause: error });
  }
}

const notTemporal = 'something answers there, but not as Temporal (is the address right?)';

/**
 * A worker connection to the same service. An unreachable server (or something there that is not
 * Temporal) is an Integration KitError naming the address, as for CLI commands.
 */
export async function connectWorker(config: EnvironmentConfig): Promise<NativeConnection> {
  // Loaded here, not at the top: a process that only needs a client does not pay for the worker SDK.
  const { NativeConnection } = await import('@temporalio/worker');
  const options = connectionOptions(config); // an unreadable TLS file is its own error, not "cannot reach"
  const address = config.TEMPORAL_ADDRESS;
  try {
    return await NativeConnection.connect(options);
  } catch (error) {
    throw new KitError(
      ErrorKind.Integration,
      `cannot reach Temporal at ${address}: ${whyWorkerCannotConnect(error)}`,
      { address },
      { cause: error },
    );
  }
}

/**
 * The gist of the worker SDK's connect error, a Rust debug dump such as
 * `tonic::transport::Error(Transport, ConnectError(… message: "Connection refused" …))`.
 */
function whyWorkerCannotConnect(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  if (/HTTP status code|with status: \d{3}|not implemented/i.test(text)) return `${notTemporal}: ${text}`;
  if (!/ConnectError|transport|timed out|deadline/i.test(text)) return text;
  const reason = /message: "([^"]+)"/.exec(text)?.[1]?.toLowerCase() ?? 'no answer';
  return `${reason}; is it running? (agents-kit dev starts one; --address or TEMPORAL_ADDRESS says where)`;
}
