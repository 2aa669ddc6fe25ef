import { z } from 'zod';
import { KitError } from './errors';

/** The id prefixes of SPEC S2.1. */
export const IdPrefix = {
  thread: 'thread',
  conversation: 'conversation',
  notification: 'notification',
  message: 'message',
  request: 'request',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

const idPattern = (prefix: IdPrefix) => new RegExp(`^${prefix}_[0-9a-f]{32}$`);

/**
 * A string that must match `pattern` (shown to models as the JSON Schema `pattern`). Not zod's
 * `.regex()`: that resets the pattern's `lastIndex` on every parse, which throws once the worker
 * shares the schema between workflows and so freezes it (workflows/shared-modules.ts).
 */
export const matching = (pattern: RegExp, message: string) =>
  z
    .string()
    .refine((value) => pattern.test(value), message)
    .meta({ pattern: pattern.source });

/** A zod schema for ids of one prefix: `thread_` followed by 32 lowercase hex digits. */
export function idSchema<Prefix extends IdPrefix>(prefix: Prefix) {
  return matching(idPattern(prefix), `expected ${prefix}_ followed by 32 lowercase hex digits`).transform(
    (value) => value as `${Prefix}_${string}`,
  );
}

export const ThreadId = idSchema('thread');
export type ThreadId = z.infer<typeof ThreadId>;
export const ConversationId = idSchema('conversation');
export type ConversationId = z.infer<typeof ConversationId>;
export const NotificationId = idSchema('notification');
export type NotificationId = z.infer<typeof NotificationId>;
export const MessageId = idSchema('message');
export type MessageId = z.infer<typeof MessageId>;
export const RequestId = idSchema('request');
export type RequestId = z.infer<typeof RequestId>;

/**
 * Validates an id at a boundary. `field` names the input in the Protocol error.
 * @example parseId('thread', input.threadId, 'threadId')
 */
export function parseId<Prefix extends IdPrefix>(
  prefix: Prefix,
  value: unknown,
  field: string,
): `${Prefix}_${string}` {
  if (typeof value !== 'string') {
    throw KitError.protocol(
      `${field}: expected a ${prefix} id string, got ${value === null ? 'null' : typeof value}`,
      {
        fields: [field],
      },
    );
  }
  if (!idPattern(prefix).test(value)) {
    throw KitError.protocol(
      `${field}: ${JSON.stringify(value.slice(0, 80))} is not a ${prefix} id (expected ${prefix}_ followed by 32 lowercase hex digits)`,
      { fields: [field] },
    );
  }
  return value as `${Prefix}_${string}`;
}

/**
 * A new id from a UUID source: `uuid4` from @temporalio/workflow in workflow code (replay-safe),
 * `crypto.randomUUID` elsewhere.
 */
export function newId<Prefix extends IdPrefix>(prefix: Prefix, uuid: () => string): `${Prefix}_${string}` {
  const hex = uuid().replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex))
    throw new KitError('Integration', `uuid source returned ${JSON.stringify(hex)}`);
  return `${prefix}_${hex}`;
}

/** The thread id for the same 32 hex digits under another prefix (a thread's conversation, say). */
export function relatedId<Prefix extends IdPrefix>(prefix: Prefix, id: string): `${Prefix}_${string}` {
  return `${prefix}_${id.slice(id.indexOf('_') + 1)}`;
}
