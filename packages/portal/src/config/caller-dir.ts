import process from 'node:process';

/**
 * The directory the user ran a command from. npm runs scripts from the repository root and
 * names the caller's directory in INIT_CWD, so a relative path on an `npm run` command line
 * resolves against it.
 */
export function callerDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env['INIT_CWD'] ?? process.cwd();
}
