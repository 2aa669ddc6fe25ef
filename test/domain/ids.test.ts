import { randomUUID } from 'node:crypto';
import { ErrorKind, KitError } from '../../domain/errors';
import { newId, parseId, relatedId } from '../../domain/ids';

const hex = '0123456789abcdef0123456789abcdef';

function protocolError(run: () => unknown): KitError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KitError);
    expect((error as KitError).kind).toBe(ErrorKind.Protocol);
    return error as KitError;
  }
  throw new Error('expected a Protocol KitError');
}

describe('parseId', () => {
  test('accepts a prefix and 32 lowercase hex digits', () => {
    expect(parseId('thread', `thread_${hex}`, 'threadId')).toBe(`thread_${hex}`);
    expect(parseId('notification', 'notification_00000000000000000000000000000000', 'id')).toBe(
      'notification_00000000000000000000000000000000',
    );
  });

  test.each([
    ['wrong prefix', `message_${hex}`],
    ['too short', `thread_${hex.slice(1)}`],
    ['too long', `thread_${hex}0`],
    ['uppercase', `thread_${hex.toUpperCase()}`],
    ['no separator', `thread${hex}`],
    ['not hex', `thread_${'g'.repeat(32)}`],
  ])('rejects %s with a Protocol error naming the field', (_case, value) => {
    const error = protocolError(() => parseId('thread', value, 'recipient'));
    expect(error.message).toContain('recipient');
    expect(error.message).toContain('thread_');
    expect(error.details).toEqual({ fields: ['recipient'] });
  });

  test('rejects a non-string with a Protocol error naming the field', () => {
    expect(protocolError(() => parseId('thread', 42, 'threadId')).message).toMatch(
      /^threadId: expected a thread id string, got number/,
    );
  });
});

test('newId makes valid, distinct ids from a UUID source', () => {
  const first = newId('request', randomUUID);
  expect(parseId('request', first, 'id')).toBe(first);
  expect(newId('request', randomUUID)).not.toBe(first);
  expect(relatedId('conversation', first)).toBe(first.replace('request_', 'conversation_'));
});
