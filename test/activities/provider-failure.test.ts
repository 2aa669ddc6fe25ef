// SPEC S6.5: a provider's failure as a Temporal failure: kind, retryability, and its Retry-After, which
// the retry honours (outside, a 429 with Retry-After: 3 was tried again after 1 s and 2 s).
import { APICallError } from '@ai-sdk/provider';
import { providerFailure, retryAfterMs } from '../../activities/model';

const apiError = (statusCode: number, headers: Record<string, string> = {}) =>
  new APICallError({
    message: 'slow down',
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    responseBody: '{"error":"slow down"}',
  });

test('Retry-After in seconds or as a date is when the call is tried again, within five minutes', () => {
  const now = Date.parse('2026-12-08T00:00:00Z');
  expect(retryAfterMs('3', now)).toBe(3_000);
  expect(retryAfterMs(' 0.5 ', now)).toBe(500);
  expect(retryAfterMs('Tue, 08 Dec 2026 00:00:10 GMT', now)).toBe(10_000);
  expect(retryAfterMs('Mon, 07 Dec 2026 23:00:00 GMT', now)).toBe(0);
  expect(retryAfterMs('86400', now)).toBe(300_000);
  expect(retryAfterMs('soon', now)).toBeUndefined();
  expect(retryAfterMs(undefined, now)).toBeUndefined();
});

test('a 429 with Retry-After is retryable and says when; a 400 is not retried', () => {
  const limited = providerFailure(apiError(429, { 'retry-after': '3' }));
  expect(limited).toMatchObject({ type: 'Integration', nonRetryable: false, nextRetryDelay: 3_000 });
  expect(limited.message).toBe('the model provider failed (HTTP 429; retryable): slow down');
  expect(providerFailure(apiError(503)).nextRetryDelay).toBeUndefined();
  expect(providerFailure(apiError(400))).toMatchObject({ type: 'Protocol', nonRetryable: true });
});
