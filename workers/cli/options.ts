import { Command } from 'commander';
import { z } from 'zod';
import { ErrorKind, KitError } from '../../domain/errors';
import { loadConfig, type EnvironmentConfig } from '../config';

/**
 * A whole-number flag value between `min` and `max` (commander hands every value over as a string, a
 * negative one too: `--max-depth -3`). Out of range says which bound, e.g. `--max-depth: must be ≥ 0`.
 */
export const intFlag = (min: number, max: number) =>
  z
    .string()
    .regex(/^[-+]?\d+$/, 'expected a whole number')
    .transform(Number)
    // The pattern already rules out fractions; a separate int() check would add a second message.
    .pipe(z.number().min(min, `must be ≥ ${min}`).max(max, `must be ≤ ${max}`));

/** The options every command that talks to Temporal accepts; each overrides its environment variable. */
export const ConnectionOptions = z.object({
  address: z.string().optional(),
  namespace: z.string().optional(),
  taskQueue: z.string().optional(),
  json: z.boolean().default(false),
});
export type ConnectionOptions = z.infer<typeof ConnectionOptions>;

/** Adds `--address`, `--namespace`, `--task-queue` and `--json` to a command. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option('--address <host:port>', 'Temporal frontend (default: $TEMPORAL_ADDRESS or 127.0.0.1:7233)')
    .option('--namespace <name>', 'Temporal namespace (default: $TEMPORAL_NAMESPACE or default)')
    .option('--task-queue <name>', 'the workers’ task queue (default: $AGENTS_KIT_TASK_QUEUE or agents-kit)')
    .option('--json', 'print one JSON document on stdout instead of text');
}

const kebab = (key: string) => `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;

/**
 * Validates a command's options with zod (SPEC S2.4). A bad value is a Protocol KitError that names
 * the flag, e.g. `run: --max-depth: expected a whole number`.
 */
export function parseOptions<Schema extends z.ZodType>(
  schema: Schema,
  raw: unknown,
  command: string,
): z.output<Schema> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const [key, ...rest] = issue.path.map(String);
    const field = key === undefined ? '(options)' : [kebab(key), ...rest].join('.');
    return `${field}: ${issue.message}`;
  });
  throw new KitError(ErrorKind.Protocol, `${command}: ${problems.join('; ')}`, {
    fields: result.error.issues.map((issue) => issue.path.map(String).join('.')),
  });
}

/** The environment configuration (SPEC S8.3) with the command-line overrides applied and validated. */
export function configFrom(
  options: Pick<ConnectionOptions, 'address' | 'namespace' | 'taskQueue'>,
  environment: Record<string, string | undefined> = process.env,
): EnvironmentConfig {
  return loadConfig({
    ...environment,
    ...(options.address !== undefined ? { TEMPORAL_ADDRESS: options.address } : {}),
    ...(options.namespace !== undefined ? { TEMPORAL_NAMESPACE: options.namespace } : {}),
    ...(options.taskQueue !== undefined ? { AGENTS_KIT_TASK_QUEUE: options.taskQueue } : {}),
  });
}

/** Parses a JSON flag value, naming the flag when it is not JSON. */
export function parseJsonFlag(text: string, flag: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw KitError.protocol(
      `${flag}: not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      { fields: [flag] },
    );
  }
}
