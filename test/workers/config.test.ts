import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorKind, KitError } from '../../domain/errors';
import { intFlag, parseOptions } from '../../workers/cli/options';
import { loadConfig } from '../../workers/config';

function protocolError(run: () => unknown): KitError {
  try {
    run();
  } catch (error) {
    if (error instanceof KitError && error.kind === ErrorKind.Protocol) return error;
    throw error;
  }
  throw new Error('expected a Protocol KitError');
}

test('defaults apply when nothing is set, and empty values count as unset', () => {
  expect(loadConfig({ TEMPORAL_API_KEY: '', TEMPORAL_ADDRESS: '' })).toEqual({
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    TEMPORAL_NAMESPACE: 'default',
    AGENTS_KIT_TASK_QUEUE: 'agents-kit',
    AGENTS_KIT_MAX_CACHED_WORKFLOWS: 1000,
  });
  expect(loadConfig({ AGENTS_KIT_MAX_CACHED_WORKFLOWS: '120' }).AGENTS_KIT_MAX_CACHED_WORKFLOWS).toBe(120);
  expect(loadConfig({ AGENTS_KIT_SHUTDOWN_GRACE_MS: '0' }).AGENTS_KIT_SHUTDOWN_GRACE_MS).toBe(0);
  expect(loadConfig({}).AGENTS_KIT_SHUTDOWN_GRACE_MS).toBeUndefined();
});

test('a full Temporal Cloud style configuration is accepted', () => {
  const cert = join(tmpdir(), `agents-kit-cert-${process.pid}.pem`);
  writeFileSync(cert, 'not really a certificate');
  expect(
    loadConfig({
      TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'my-ns.a1b2c',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CERT_PATH: cert,
      TEMPORAL_TLS_KEY_PATH: cert,
      AGENTS_KIT_TASK_QUEUE: 'agents/prod-1',
    }),
  ).toMatchObject({ TEMPORAL_ADDRESS: 'my-ns.a1b2c.tmprl.cloud:7233', TEMPORAL_TLS: 'true' });
});

test.each<[string, Record<string, string>, RegExp]>([
  ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'localhost' }, /TEMPORAL_ADDRESS: expected host:port/],
  ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'localhost:70000' }, /TEMPORAL_ADDRESS: .*65535/],
  ['TEMPORAL_NAMESPACE', { TEMPORAL_NAMESPACE: 'has space' }, /TEMPORAL_NAMESPACE: expected a Temporal/],
  ['TEMPORAL_TLS', { TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS: expected true or false/],
  ['TEMPORAL_TLS_CERT_PATH', { TEMPORAL_TLS_CERT_PATH: '/nonexistent/cert.pem' }, /CERT_PATH: no such file/],
  [
    'AGENTS_KIT_TASK_QUEUE',
    { AGENTS_KIT_TASK_QUEUE: 'queue with spaces' },
    /AGENTS_KIT_TASK_QUEUE: expected/,
  ],
  ...['lots', '0', '2.5', '1000000'].map((value): [string, Record<string, string>, RegExp] => [
    'AGENTS_KIT_MAX_CACHED_WORKFLOWS',
    { AGENTS_KIT_MAX_CACHED_WORKFLOWS: value },
    /AGENTS_KIT_MAX_CACHED_WORKFLOWS: expected a whole number/,
  ]),
  [
    'AGENTS_KIT_LOG_LEVEL',
    { AGENTS_KIT_LOG_LEVEL: 'verbose' },
    /AGENTS_KIT_LOG_LEVEL: expected TRACE, DEBUG/,
  ],
  ['AGENTS_KIT_LOG_FORMAT', { AGENTS_KIT_LOG_FORMAT: 'xml' }, /AGENTS_KIT_LOG_FORMAT: expected text or json/],
  [
    'AGENTS_KIT_METRICS_ADDRESS',
    { AGENTS_KIT_METRICS_ADDRESS: '9464' },
    /AGENTS_KIT_METRICS_ADDRESS: expected host:port/,
  ],
  ...['soon', '-1', '0.5', '3600001'].map((value): [string, Record<string, string>, RegExp] => [
    'AGENTS_KIT_SHUTDOWN_GRACE_MS',
    { AGENTS_KIT_SHUTDOWN_GRACE_MS: value },
    /AGENTS_KIT_SHUTDOWN_GRACE_MS: expected a whole number of milliseconds from 0 to 3600000/,
  ]),
])('a bad %s is a Protocol error naming it', (variable, environment, message) => {
  const error = protocolError(() => loadConfig(environment));
  expect(error.message).toMatch(message);
  expect(error.details).toEqual({ fields: expect.arrayContaining([variable]) });
});

test('a certificate without its key, or TLS off with an API key, is refused', () => {
  const cert = join(tmpdir(), `agents-kit-cert-only-${process.pid}.pem`);
  writeFileSync(cert, 'x');
  expect(protocolError(() => loadConfig({ TEMPORAL_TLS_CERT_PATH: cert })).message).toMatch(
    /both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH/,
  );
  expect(
    protocolError(() => loadConfig({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'secret' })).message,
  ).toMatch(/TEMPORAL_TLS=false contradicts/);
});

test('command-line options are validated and a bad one is named by its flag', () => {
  const schema = z.object({ maxDepth: intFlag(0, 64).optional() });
  expect(parseOptions(schema, { maxDepth: '3' }, 'run')).toEqual({ maxDepth: 3 });
  expect(protocolError(() => parseOptions(schema, { maxDepth: 'three' }, 'run')).message).toBe(
    'run: --max-depth: expected a whole number',
  );
  expect(protocolError(() => parseOptions(schema, { maxDepth: '65' }, 'run')).message).toMatch(
    /^run: --max-depth: .*64/,
  );
});
