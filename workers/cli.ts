import { CommanderError } from 'commander';
import { KitError } from '../domain/errors';
import { processOutput } from './cli/io';
import { buildProgram, ExitCode, isInformational } from './cli/program';
import { followWrapper } from './wrapper-watch';

/**
 * The `agents-kit` process: parses the command line, runs the command, and exits 0 on success,
 * 1 with one line `agents-kit: <KitError kind>: <message>` on failure, 2 on a usage error.
 * Only commander, zod and the option schemas load before a command runs (`--help` answers at once);
 * each command loads the Temporal SDK and the client API when it runs, and installs the worker runtime
 * only if it runs a worker.
 */
async function main(argv: readonly string[]): Promise<ExitCode> {
  try {
    await buildProgram(processOutput).parseAsync([...argv]);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) return isInformational(error) ? ExitCode.ok : ExitCode.usage;
    const kitError = KitError.is(error) ? error : (await import('../client/errors')).toKitError(error);
    process.stderr.write(`agents-kit: ${kitError.kind}: ${kitError.message.split('\n')[0]}\n`);
    if (process.env.AGENTS_KIT_DEBUG) console.error(error);
    return ExitCode.failure;
  }
}

followWrapper();
main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`agents-kit: ${String(error)}\n`);
    process.exit(ExitCode.failure);
  },
);
