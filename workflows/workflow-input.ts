import { workflowInfo } from '@temporalio/workflow';
import type { z } from 'zod';
import { ErrorKind, KitError, protocolErrorFromZod } from '../domain/errors';
import { asFailure } from './failures';

/**
 * The version this build knows of the wire (SPEC S3.9: `protocolVersion`) and of every carried snapshot
 * (`schemaVersion`): 1 for all of protocol v1.
 */
const spokenVersion = 1;
const versionFields = new Set(['protocolVersion', 'schemaVersion']);
/** How many unknown fields a task failure's message names. */
const namedAtMost = 5;

/**
 * Thrown for a workflow input that a newer build of agents-kit wrote. Not a Temporal failure, so it
 * fails the workflow *task*, which Temporal retries until a worker that can read the input takes it.
 */
export class NewerBuildInput extends Error {
  override readonly name = 'NewerBuildInput';
}

/**
 * Parses what a workflow was started with, a carried snapshot included (SPEC S2, S7.6). Input that is
 * only newer than this build (a `protocolVersion` or snapshot `schemaVersion` above the one it knows,
 * or fields it does not know and nothing else wrong) is left for a newer worker: during a rolling
 * deploy an old worker may take a run's first task, or replay a run the new build has been running,
 * and failing the run there would end it for good. Any other bad input fails the workflow as Protocol.
 *
 * Not behind a patch, on purpose: a run that replays here without a marker may be one the newer build
 * started (it never asked), so a marker cannot tell the paths apart; and the old path only ever ended
 * runs at their first task, so no open run's history takes it.
 */
export function workflowInput<Schema extends z.ZodType>(
  schema: Schema,
  raw: unknown,
  what: string,
): z.output<Schema> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const newer = newerThanThisBuild(raw, result.error.issues);
  if (newer !== undefined) {
    throw new NewerBuildInput(
      `${what} has ${newer}: written by a newer agents-kit build, so this workflow task is retried ` +
        'until a worker of that build takes it',
    );
  }
  throw protocolErrorFromZod(what, result.error);
}

/**
 * SPEC S3.9: a thread's or a conversation's workflow runs under its own id (the root run's is checked
 * with the attach rules), so a raw start cannot run one under another's id or speak for it there.
 */
export function checkRunsAs(id: string, what: string): void {
  const { workflowId } = workflowInfo();
  if (workflowId !== id)
    throw new KitError(
      ErrorKind.PermissionDenied,
      `${what} ${id} must run as workflow ${id}, not ${workflowId}`,
    );
}

/** What a workflow's start throws: a newer build's input as it is (a task failure), else a KitError failure. */
export function startFailure(error: unknown): Error {
  return error instanceof NewerBuildInput ? error : asFailure(error);
}

/** Says how `raw` is newer than this build, or undefined when it is simply wrong. */
function newerThanThisBuild(raw: unknown, issues: readonly z.core.$ZodIssue[]): string | undefined {
  for (const issue of issues) {
    const name = issue.path.at(-1);
    if (typeof name !== 'string' || !versionFields.has(name)) continue;
    const version = valueAt(raw, issue.path);
    if (typeof version === 'number' && Number.isInteger(version) && version > spokenVersion)
      return `${issue.path.map(String).join('.')} ${version} (this build knows ${spokenVersion})`;
  }
  const fields = unknownFieldsOnly(issues);
  if (!fields || fields.length === 0) return undefined;
  // A message of bounded size, however many entries carry the new fields.
  const named = fields.slice(0, namedAtMost).join(', ');
  const more = fields.length > namedAtMost ? ` and ${fields.length - namedAtMost} more` : '';
  return `fields this build does not know (${named}${more})`;
}

/** The value at `path` in `raw`, or undefined. */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * The unknown fields that are all `issues` complain of, or undefined when something else is wrong. (Zod
 * reports a union member that fits but for unknown fields as that member's `unrecognized_keys`; an
 * `invalid_union` means no member fits, which is wrong input, not newer.)
 */
function unknownFieldsOnly(issues: readonly z.core.$ZodIssue[]): string[] | undefined {
  const fields: string[] = [];
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') return undefined;
    const at = issue.path.map(String);
    fields.push(...issue.keys.map((key) => [...at, key].join('.')));
  }
  return fields;
}
