/**
 * `npm install` (the `prepare` script): points this checkout's git at scripts/git-hooks, so every
 * commit runs the pre-commit checks. Outside a git checkout (a tarball) there is nothing to do.
 */
import { spawnSync } from 'node:child_process';

const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' });

if (git('rev-parse', '--is-inside-work-tree').stdout.trim() === 'true') {
  const set = git('config', 'core.hooksPath', 'scripts/git-hooks');
  if (set.status !== 0) console.warn(`could not install the git hooks: ${set.stderr.trim()}`);
}
