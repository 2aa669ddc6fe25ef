import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { codecServerCommand } from './commands/codec-server';
import { devCommand } from './commands/dev';
import { interruptCommand } from './commands/interrupt';
import { policyCommand } from './commands/policy';
import { reconcileCommand } from './commands/reconcile';
import { resolveCommand } from './commands/resolve';
import { runCommand } from './commands/run';
import { sendCommand } from './commands/send';
import { shutdownCommand } from './commands/shutdown';
import { treeCommand } from './commands/tree';
import { usageCommand } from './commands/usage';
import { watchCommand } from './commands/watch';
import { workerCommand } from './commands/worker';
import type { CliOutput } from './io';

/**
 * The installed package's version, from the nearest agents-kit package.json above this file (from the
 * sources and from dist/ alike) — not `npm_package_version`, which names whatever package runs npm.
 */
function packageVersion(): string {
  for (let dir = __dirname, up = 0; up < 4; dir = dirname(dir), up++) {
    try {
      const found = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (found.name === 'agents-kit' && found.version) return found.version;
    } catch {
      // no package.json here
    }
  }
  return 'unknown';
}

/** Exit codes: 0 success, 1 a KitError (or any failure of the operation), 2 a usage error. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The `agents-kit` command tree. One file per command under commands/; a new command (`watch`,
 * `resolve`, …) is one more file and one more `addCommand` line here.
 * Usage errors throw a CommanderError (exitOverride) instead of exiting, so the entry point decides.
 */
export function buildProgram(output: CliOutput): Command {
  const program = new Command('agents-kit')
    .description('Run trees of AI agents durably on Temporal.')
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      outputError: (text, write) => write(`agents-kit: usage: ${text.replace(/^error: /, '')}`),
    });
  const commands = [
    devCommand(output),
    workerCommand(output),
    runCommand(output),
    treeCommand(output),
    usageCommand(output),
    policyCommand(output),
    sendCommand(output),
    interruptCommand(output),
    shutdownCommand(output),
    reconcileCommand(output),
    watchCommand(output),
    resolveCommand(output),
    codecServerCommand(output),
  ];
  program.exitOverride();
  for (const command of commands) program.addCommand(command.copyInheritedSettings(program));
  return program;
}

/**
 * Whether a CommanderError is help or version output asked for (exit 0) rather than a usage error (exit
 * 2): help shown because no command was given is a usage error (commander marks it with exit code 1).
 */
export function isInformational(error: CommanderError): boolean {
  return (
    ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) &&
    error.exitCode === 0
  );
}
