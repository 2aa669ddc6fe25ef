import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { ErrorKind, KitError, kitErrorFromFailure, parseInput } from '../../domain/errors';

test('only Timeout and Integration are retryable', () => {
  const retryable = Object.values(ErrorKind).filter((kind) => new KitError(kind, 'x').retryable);
  expect(retryable.sort()).toEqual(['Integration', 'Timeout']);
});

test('a KitError survives the ApplicationFailure form with kind, message and details', () => {
  const original = new KitError(ErrorKind.QuotaExceeded, 'maxTotal 20 reached', { limit: 20 });
  const failure = original.toFailure();
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure.type).toBe('QuotaExceeded');
  expect(failure.nonRetryable).toBe(true);
  const wrapped = new Error('outer', { cause: failure });
  const back = kitErrorFromFailure(wrapped);
  expect(back).toBeInstanceOf(KitError);
  expect(back).toMatchObject({
    kind: 'QuotaExceeded',
    message: 'maxTotal 20 reached',
    details: { limit: 20 },
  });
  expect(back?.cause).toBe(wrapped);
});

test('a failure of an unknown type is not mistaken for a KitError', () => {
  expect(
    kitErrorFromFailure(ApplicationFailure.create({ type: 'SomethingElse', message: 'x' })),
  ).toBeUndefined();
});

test('parseInput names every offending field without dumping zod issues', () => {
  const schema = z.object({ task: z.string().min(1), depth: z.number() }).strict();
  try {
    parseInput(schema, { task: '', depth: 'x' }, 'spawn request');
    throw new Error('expected failure');
  } catch (error) {
    expect(error).toBeInstanceOf(KitError);
    expect((error as KitError).kind).toBe('Protocol');
    expect((error as KitError).message).toMatch(/^invalid spawn request: task: .*; depth: /);
    expect((error as KitError).details).toEqual({ fields: ['task', 'depth'] });
  }
});
