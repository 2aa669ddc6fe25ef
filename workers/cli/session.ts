import type { Client } from '@temporalio/client';
import { ThreadService } from '../../client/thread-service';
import { kitCall } from '../../client/errors';
import { parseId, type ThreadId } from '../../domain/ids';
import type { EnvironmentConfig } from '../config';
import { connectClient } from '../connect';

/** A client connection for one command, closed by `close()`. */
export interface CliSession {
  config: EnvironmentConfig;
  client: Client;
  close(): Promise<void>;
}

/** Connects to the configured Temporal; an unreachable server is an Integration error naming the address. */
export async function openSession(config: EnvironmentConfig): Promise<CliSession> {
  const client = await kitCall(`connecting to Temporal at ${config.TEMPORAL_ADDRESS}`, () =>
    connectClient(config),
  );
  return { config, client, close: () => client.connection.close() };
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

/** Reopens a root run (NotFound when there is none). */
export function reopenRoot(session: CliSession, rootId: ThreadId): Promise<ThreadService> {
  return ThreadService.reopen(session.client, rootId);
}
