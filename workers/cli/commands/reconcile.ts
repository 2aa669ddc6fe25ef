import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ReconcileRequest } from '../../../domain/control';
import { KitError, parseInput } from '../../../domain/errors';
import { formatReconcile } from '../format';
import type { CliOutput } from '../io';
import {
  ConnectionOptions,
  configFrom,
  parseJsonFlag,
  parseOptions,
  withConnectionOptions,
} from '../options';
import { parseRootId, reopenRoot, withSession } from '../session';

const ReconcileOptions = ConnectionOptions.extend({ request: z.string().min(1) });

function readRequest(value: string): unknown {
  if (!value.startsWith('@')) return parseJsonFlag(value, '--request');
  try {
    return parseJsonFlag(readFileSync(value.slice(1), 'utf8'), '--request');
  } catch (error) {
    if (error instanceof KitError) throw error;
    throw KitError.protocol(`--request: cannot read ${value.slice(1)}`, { fields: ['--request'] });
  }
}

/**
 * `agents-kit reconcile <rootId> --request <json>`: resolves an uncertain spawn (SPEC S3.6). The JSON
 * is a ReconcileRequest: `{"request": {<spawn request with requestId>}, "reportedFailed": false}`.
 */
export function reconcileCommand(output: CliOutput): Command {
  return withConnectionOptions(
    new Command('reconcile')
      .description('resolve an uncertain spawn by its request: committed, closed or still uncertain')
      .argument('<rootId>', 'the root thread id (thread_…)')
      .requiredOption(
        '--request <json>',
        'the reconcile request as JSON, or @file: {"request": {"task": …, "requestId": "request_…"}, "reportedFailed": false}',
      ),
  ).action(async (rootId: string, raw: unknown) => {
    const options = parseOptions(ReconcileOptions, raw, 'reconcile');
    const root = parseRootId(rootId);
    // Validated before connecting: a bad field is a Protocol error naming it, and nothing is sent.
    const request = parseInput(ReconcileRequest, readRequest(options.request), '--request');
    await withSession(configFrom(options), async (session) => {
      const service = await reopenRoot(session, root);
      const result = await service.reconcile(request);
      if (options.json) output.json(result);
      else output.line(formatReconcile(result));
    });
  });
}
