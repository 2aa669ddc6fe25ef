import { Command } from 'commander';
import { z } from 'zod';
import { codecKeysVariable, loadCodecKeys } from '../../../client/codec-keys';
import { KitError } from '../../../domain/errors';
import { CodecOrigin, defaultCodecCorsOrigins } from '../../codec-server';
import type { CliOutput } from '../io';
import { intFlag, parseOptions } from '../options';

const CodecServerOptions = z.object({
  port: intFlag(0, 65_535).default(8888),
  host: z.string().min(1).default('127.0.0.1'),
  corsOrigin: z.array(CodecOrigin).min(1).optional(),
  json: z.boolean().default(false),
});

/** Collects `--cors-origin` values: repeatable, each maybe a comma-separated list. */
const collectOrigins = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  ...value
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean),
];

/** Resolves on the first SIGINT or SIGTERM. */
const untilStopped = () =>
  new Promise<void>((stopped) => {
    process.once('SIGINT', () => stopped());
    process.once('SIGTERM', () => stopped());
  });

/**
 * `agents-kit codec-server`: a codec server for the Temporal Web UI (and `temporal --codec-endpoint`)
 * with the keys of AGENTS_KIT_CODEC_KEYS, until SIGINT/SIGTERM (SPEC S3.9).
 */
export function codecServerCommand(output: CliOutput): Command {
  return new Command('codec-server')
    .description(`decrypt payloads for the Temporal Web UI with the keys of $${codecKeysVariable}`)
    .option('--port <port>', 'the port to listen on (0: any free one)', '8888')
    .option('--host <host>', 'the interface to listen on (whoever reaches it can decrypt)', '127.0.0.1')
    .option(
      '--cors-origin <url>',
      `a Web UI origin allowed to call it; repeatable or comma-separated (default: ${defaultCodecCorsOrigins.join(', ')})`,
      collectOrigins,
    )
    .option('--json', 'print the URL as one JSON document on stdout once listening')
    .action(async (raw: unknown) => {
      const options = parseOptions(CodecServerOptions, raw, 'codec-server');
      const keys = loadCodecKeys(process.env);
      if (!keys) {
        throw KitError.protocol(
          `codec-server: ${codecKeysVariable} is not set: set it to id:base64key (make a key with: openssl rand -base64 32), the same value the workers and clients have`,
          { fields: [codecKeysVariable] },
        );
      }
      const corsOrigins = options.corsOrigin ?? defaultCodecCorsOrigins;
      const { startCodecServer } = await import('../../codec-server');
      const server = await startCodecServer({ port: options.port, host: options.host, keys, corsOrigins });
      try {
        if (options.json) output.json({ url: server.url, corsOrigins, keyIds: keys.map(({ id }) => id) });
        else output.line(server.url);
        output.note(
          `codec server on ${server.url} (keys ${keys.map(({ id }) => id).join(', ')}; encrypting with ${keys[0]!.id}); CORS for ${corsOrigins.join(', ')}`,
        );
        output.note(
          `point the Web UI at it: agents-kit dev --ui-codec-endpoint ${server.url}; stop with Ctrl-C`,
        );
        await untilStopped();
      } finally {
        await server.close();
      }
      output.note('codec server stopped');
    });
}
