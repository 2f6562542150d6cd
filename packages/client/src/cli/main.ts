#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../kit/config/settings.ts';
import { HttpError } from '../kit/http/request.ts';
import { isSetupError, PortalError } from '../kit/portal/errors.ts';
import { exitOnSignals } from '../kit/process/exit-on-signals.ts';
import { processContext, type CliContext, type RegisterCommand } from './context.ts';
import { CLIENT_VERSION } from '../kit/version.ts';
import { CliError, EXIT_CODES, type ExitKind, Output } from './output.ts';

/**
 * Each command's module by the command's name, in the order help lists them, loaded when a run
 * needs it: a command line that names a command loads that command's code alone. Loading every
 * command made each run read about 590 modules, the scanner, reports, imports and mail among
 * them, whatever it did (`svc license status` needs about 360).
 */
const COMMANDS = new Map<string, () => Promise<{ default: RegisterCommand }>>([
  ['upload', () => import('./commands/upload.ts')],
  ['license', () => import('./commands/license.ts')],
  ['api-debug', () => import('./commands/api-debug.ts')],
  ['e2e-smoke-test', () => import('./commands/e2e-smoke-test.ts')],
  ['pi-validate', () => import('./commands/pi-validate.ts')],
  ['dependency-check', () => import('./commands/dependency-check.ts')],
  ['synthetic-collection', () => import('./commands/synthetic-collection.ts')],
  ['alert', () => import('./commands/alert.ts')],
  ['scan', () => import('./commands/scan.ts')],
  ['export', () => import('./commands/export.ts')],
  ['import', () => import('./commands/import.ts')],
]);

export const COMMAND_NAMES: readonly string[] = [...COMMANDS.keys()];

/**
 * The commands a command line needs: the one its first word names, else every command (the
 * program's help and version, `svc help …`, a mistyped name that Commander answers with the
 * names it knows).
 */
export async function commandsFor(argv: readonly string[]): Promise<RegisterCommand[]> {
  const named = argv[0] === undefined ? undefined : COMMANDS.get(argv[0]);
  const loaders = named === undefined ? [...COMMANDS.values()] : [named];
  return Promise.all(loaders.map(async (load) => (await load()).default));
}

export const VERSION = CLIENT_VERSION;

/** Builds the `svc` program for one run with `commands` (commandsFor). */
export function buildProgram(ctx: CliContext, commands: readonly RegisterCommand[]): Command {
  const program = new Command('svc')
    .description('Scan collection client: upload sessions, check the license, validate hosts and debug the portal')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => void ctx.streams.stdout.write(s),
      writeErr: (s) => void ctx.streams.stderr.write(s),
    })
    .exitOverride();
  program.addHelpText(
    'after',
    '\nExit codes: 0 done; 1 the operation failed (a check failed, the portal refused or could not be reached); 2 usage or configuration error.\nColor is used only on an interactive terminal with NO_COLOR unset.',
  );
  for (const register of commands) register(program, ctx);
  // Every subcommand reports through the same output and exit-code handling.
  for (const cmd of allCommands(program))
    cmd.exitOverride().configureOutput({
      writeOut: (s) => void ctx.streams.stdout.write(s),
      writeErr: (s) => void ctx.streams.stderr.write(s),
    });
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/** Runs one command line and returns the exit code; never throws. */
export async function run(argv: string[], ctx: CliContext): Promise<number> {
  try {
    const program = buildProgram(ctx, await commandsFor(argv));
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      // Commander has printed the reason already (or, for a command run without one of its
      // subcommands, 'commander.help', the usage on stderr).
      return EXIT_CODES.usage;
    }
    const { kind, message } = endingOf(err);
    new Output(ctx.streams).error(message);
    return EXIT_CODES[kind];
  }
}

/** The one place an error a command threw becomes a kind of ending (EXIT_CODES) and its line on stderr. */
export function endingOf(err: unknown): { kind: ExitKind; message: string } {
  if (err instanceof CliError) return { kind: err.kind, message: err.message };
  if (err instanceof ConfigError) return { kind: 'config', message: err.message };
  // Missing credentials and a bad target are configuration; everything else (refused,
  // unreachable, malformed) is the portal's.
  if (err instanceof PortalError) return { kind: isSetupError(err) ? 'config' : 'portal', message: err.message };
  if (err instanceof HttpError) return { kind: err.kind === 'file' ? 'failed' : 'portal', message: err.message };
  return { kind: 'unexpected', message: `unexpected failure: ${(err as Error).stack ?? String(err)}` };
}

if (import.meta.main) {
  exitOnSignals();
  process.exitCode = await run(process.argv.slice(2), processContext());
}
