import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from '@svc/test-support/cli';
import { buildProgram, COMMAND_NAMES, commandsFor, run } from '../src/cli/main.ts';
import { capturedContext } from './helpers/captured-cli.ts';

/** A run loads the code of the command it names, and every command only when it needs them all. */

const exec = promisify(execFile);

const context = () => capturedContext('/nonexistent-svc-home');

const namesOf = async (argv: string[]) =>
  buildProgram(context().ctx, await commandsFor(argv)).commands.map((c) => c.name());

describe('loading the commands', () => {
  it('lists each command under the name it registers, in the order help shows them', async () => {
    expect(await namesOf([])).toEqual(COMMAND_NAMES);
    expect(COMMAND_NAMES).toHaveLength(11);
  });

  it('a command line that names a command loads that command alone', async () => {
    for (const name of COMMAND_NAMES) expect(await namesOf([name, '--help'])).toEqual([name]);
  });

  it('the program help, the version, `help <command>` and an unknown word load every command', async () => {
    for (const argv of [[], ['--help'], ['--version'], ['help', 'scan'], ['scna'], ['--json', 'upload']])
      expect(await namesOf(argv), argv.join(' ')).toEqual(COMMAND_NAMES);
  });

  it('a mistyped command is answered with the names it could mean (exit 2)', async () => {
    const { ctx, stderr } = context();
    expect(await run(['scna'], ctx)).toBe(2);
    expect(stderr()).toMatch(/unknown command 'scna'[\s\S]*Did you mean scan\?/);
  });

  it('`svc license --help` reads none of the scanner, reports, imports, pipeline, alerts or mail', async () => {
    // A load hook that names every module file the process reads, on stderr.
    const hook = `data:text/javascript,${encodeURIComponent(
      "import { registerHooks } from 'node:module'; registerHooks({ load(url, c, next) { if (url.startsWith('file:')) process.stderr.write('loaded ' + url + '\\n'); return next(url, c); } });",
    )}`;
    const { stdout, stderr } = await exec(
      path.join(REPO, 'node_modules/.bin/node'),
      [
        '--disable-warning=ExperimentalWarning',
        '--import',
        hook,
        'packages/client/src/cli/main.ts',
        'license',
        '--help',
      ],
      { cwd: REPO, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/nonexistent-svc-home' } },
    );
    expect(stdout).toContain('Usage: svc license');
    const loaded = stderr.split('\n').filter((l) => l.startsWith('loaded '));
    expect(loaded.some((l) => l.endsWith('/packages/client/src/cli/commands/license.ts'))).toBe(true);
    const heavy = loaded.filter((l) =>
      /\/packages\/client\/src\/(scanner|report|imports|pipeline|alerts|cve-match)\/|\/node_modules\/nodemailer\/|\/cli\/commands\/(?!license\.ts)/.test(
        l,
      ),
    );
    expect(heavy).toEqual([]);
  });
});
