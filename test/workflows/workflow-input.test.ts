// What a workflow's input parse throws (workflows/workflow-input.ts): a newer build's input fails the task
// (NewerBuildInput, not a Temporal failure), wrong input fails the run as Protocol. The server-side
// behaviour is in newer-build-input.test.ts; these are the shapes that test cannot reach cheaply.
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { ErrorKind } from '../../domain/errors';
import { NewerBuildInput, startFailure, workflowInput } from '../../workflows/workflow-input';

const Entry = z.object({ seq: z.number() }).strict();
const Shape = z
  .object({
    protocolVersion: z.literal(1),
    kind: z.union([z.object({ a: z.string() }).strict(), z.object({ b: z.number() }).strict()]),
    entries: z.array(Entry),
    resume: z
      .object({ schemaVersion: z.literal(1) })
      .strict()
      .optional(),
  })
  .strict();
const valid = { protocolVersion: 1, kind: { a: 'x' }, entries: [{ seq: 1 }] };

/** What the workflow would throw for `raw`. */
function thrown(raw: unknown): Error {
  try {
    workflowInput(Shape, raw, 'test input');
  } catch (error) {
    return startFailure(error);
  }
  throw new Error('parsed');
}

test('valid input parses', () => {
  expect(workflowInput(Shape, valid, 'test input')).toEqual(valid);
});

test.each([
  ['a field at the top', { ...valid, added: 1 }, 'fields this build does not know (added)'],
  ['a field in a union member', { ...valid, kind: { a: 'x', added: 1 } }, 'kind.added'],
  ['a newer protocolVersion', { ...valid, protocolVersion: 2, reshaped: true }, 'protocolVersion 2'],
  ['a newer snapshot schemaVersion', { ...valid, resume: { schemaVersion: 3 } }, 'resume.schemaVersion 3'],
])('%s fails the task, naming it', (_, raw, named) => {
  const error = thrown(raw);
  expect(error).toBeInstanceOf(NewerBuildInput);
  expect(error).not.toBeInstanceOf(ApplicationFailure);
  expect(error.message).toContain(named);
  expect(error.message).toContain('written by a newer agents-kit build');
});

test('the message names five unknown fields at most, however many entries carry them', () => {
  const entries = Array.from({ length: 10_000 }, (_, seq) => ({ seq, added: 1 }));
  const error = thrown({ ...valid, entries });
  expect(error).toBeInstanceOf(NewerBuildInput);
  expect(error.message).toContain('entries.4.added and 9995 more');
  expect(error.message.length).toBeLessThan(400);
});

test.each([
  ['null', null],
  ['a string', 'input'],
  ['a missing field', { protocolVersion: 1, kind: { a: 'x' } }],
  ['a field of the wrong type beside an unknown one', { ...valid, entries: 'none', added: 1 }],
  ['a protocolVersion that is not a newer integer', { ...valid, protocolVersion: '2' }],
  ['a fractional protocolVersion', { ...valid, protocolVersion: 1.5 }],
  ['an older protocolVersion', { ...valid, protocolVersion: 0 }],
  ['a union member that fits no shape', { ...valid, kind: { c: true } }],
])('%s fails the run as Protocol', (_, raw) => {
  const error = thrown(raw);
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect((error as ApplicationFailure).type).toBe(ErrorKind.Protocol);
  expect(error.message).toContain('invalid test input');
});
