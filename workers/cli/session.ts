import type { Client } from '@temporalio/client';
import type { ThreadService } from '../../client/thread-service';
import { ErrorKind, KitError } from '../../domain/errors';
import type { Capability } from '../../domain/capability';
import { parseId, relatedId, type ThreadId } from '../../domain/ids';
import type { EnvironmentConfig } from '../config';

// The Temporal SDK and the client API are loaded when a command connects, not when the command line is
// parsed: `agents-kit --help` and a usage error answer without loading them.

/** A client connection for one command, closed by `close()`. */
export interface CliSession {
  config: EnvironmentConfig;
  client: Client;
  close(): Promise<void>;
}

/** How long a command waits for Temporal to answer before saying it cannot reach it. */
export const connectTimeoutMs = 3_000;

/**
 * Connects to the configured Temporal; an unreachable server is an Integration error naming the address.
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, the command's client calls are traced (SPEC S11.2), flushed at close.
 */
export async function openSession(config: EnvironmentConfig): Promise<CliSession> {
  const [{ connectClient }, { tracingFromEnvironment }] = await Promise.all([
    import('../connect'),
    import('../../client/tracing'),
  ]);
  const address = config.TEMPORAL_ADDRESS;
  const tracing = await tracingFromEnvironment(process.env, { serviceName: 'agents-kit-cli' });
  try {
    const client = await connectClient(config, { connectTimeoutMs, tracing });
    const close = async () => {
      await client.connection.close();
      await tracing?.shutdown();
    };
    return { config, client, close };
  } catch (error) {
    await tracing?.shutdown();
    throw new KitError(
      ErrorKind.Integration,
      `cannot reach Temporal at ${address}: ${whyUnreachable(error)}`,
      {
        address,
      },
      { cause: error },
    );
  }
}

/** Nothing answering (the usual case: no server there) or the server refusing the first call (TLS, API key). */
function whyUnreachable(error: unknown): string {
  if (error instanceof Error && error.name === 'ServiceError') {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return `no answer within ${connectTimeoutMs / 1000} s; is it running? (agents-kit dev starts one; --address or TEMPORAL_ADDRESS says where)`;
}

/** Runs `body` with a session, closing the connection whatever happens. */
export async function withSession<Result>(
  config: EnvironmentConfig,
  body: (session: CliSession) => Promise<Result>,
): Promise<Result> {
  const session = await openSession(config);
  try {
    return await body(session);
  } finally {
    await session.close();
  }
}

/** Validates a `<rootId>` argument (a Protocol error naming `rootId`), before anything connects. */
export const parseRootId = (rootId: string): ThreadId => parseId('thread', rootId, 'rootId');

/** The root capability from AGENTS_KIT_CAPABILITY (SPEC S3.9); PermissionDenied when it is not set. */
export function rootCapabilityOf(session: CliSession, rootId: ThreadId): string {
  const capability = session.config.AGENTS_KIT_CAPABILITY;
  if (!capability)
    throw new KitError(
      ErrorKind.PermissionDenied,
      `acting on root ${rootId} needs its capability: set AGENTS_KIT_CAPABILITY to what \`agents-kit run\` printed`,
    );
  return capability;
}

/** Reopens a root run with AGENTS_KIT_CAPABILITY (NotFound when there is none, PermissionDenied for a wrong one). */
export async function reopenRoot(session: CliSession, rootId: ThreadId): Promise<ThreadService> {
  const { ThreadService } = await import('../../client/thread-service');
  return ThreadService.reopen(session.client, rootId, rootCapabilityOf(session, rootId));
}

/**
 * The capability a conversation is read with (SPEC S3.9): its tree's root capability, from
 * AGENTS_KIT_CAPABILITY and the root its thread names; none without the variable or for a conversation
 * of no thread (a standalone one needs none, a thread's then answers PermissionDenied).
 */
export async function readerCapabilityOf(
  session: CliSession,
  conversationId: string,
): Promise<Capability | undefined> {
  const runKey = session.config.AGENTS_KIT_CAPABILITY;
  if (!runKey) return undefined;
  const { rootCapability } = await import('../../domain/capability');
  const { threadQuery } = await import('../../domain/messages');
  const { isWorkflowNotFound, toKitError } = await import('../../client/errors');
  const threadId = relatedId('thread', conversationId);
  // No thread: a standalone conversation, read without a capability. Any other failure (no codec keys,
  // no worker) is said as it is, not taken for a missing capability.
  const thread = await session.client.workflow
    .getHandle(threadId)
    .query(threadQuery)
    .catch((error: unknown) => {
      if (isWorkflowNotFound(error)) return undefined;
      throw toKitError(error, `reading thread ${threadId} to prove AGENTS_KIT_CAPABILITY`);
    });
  return thread ? rootCapability(runKey, thread.rootId) : undefined;
}
