import path from 'node:path';
import { type CommandPayloads, releaseVersionOfTag } from '@svc/protocol';
import { releaseUpdate } from '../release/update.ts';
import { type CommandContext, done, failure, fromProcess, type Outcome } from './outcome.ts';
import { type ProcessRun, runProcess } from './spawn.ts';

/**
 * update, by how the agent was installed (install-kind.ts): a release install takes the next
 * release (release/update.ts); the Debian package, an archive unpacked elsewhere and a container
 * are refused with what to do instead; a checkout moves with git as follows.
 *
 * update: the install's git checkout moves to a release tag (`version`, which beats `branch`) or
 * to the tip of a branch (default main) from `origin`. Values are checked by the protocol's
 * rules (no leading `-`, no `..`) and reach git only in refs/ forms after the options, so none
 * can be read as an option. HEAD advanced → the release's dependencies when its package-lock.json
 * differs (`npm ci --omit=dev`, the agent's workspace as the documented install), the bundle built
 * again, then re-exec; unchanged → reload the configuration.
 */

const DEFAULT_BRANCH = 'main';
export const NO_GIT_DIRECTORY =
  'update: cannot self-update: this install has no git directory (a container install); deploy a new image instead';

/** The git invocations of one update, in order. HEAD is read before and after by the caller. */
export function updateSteps(payload: CommandPayloads['update'], branchExists: boolean): string[][] {
  if (payload.version !== undefined) {
    const tag = `refs/tags/${payload.version}`;
    return [
      ['fetch', '--quiet', '--no-tags', 'origin', `+${tag}:${tag}`],
      ['checkout', '--quiet', '--detach', tag, '--'],
    ];
  }
  const branch = payload.branch ?? DEFAULT_BRANCH;
  const remote = `refs/remotes/origin/${branch}`;
  return [
    ['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:${remote}`],
    branchExists ? ['checkout', '--quiet', branch, '--'] : ['checkout', '--quiet', '-b', branch, remote, '--'],
    ['merge', '--quiet', '--ff-only', remote],
  ];
}

/**
 * What runs in the install directory after the checkout moved: the dependencies when the lockfile
 * changed, then the bundle bin/svcd runs (with this daemon's own Node).
 */
export function installSteps(lockChanged: boolean): { what: string; argv: string[] }[] {
  const build = {
    what: 'bundle built (packages/agent/dist/svcd.mjs)',
    argv: [process.execPath, path.join('packages', 'agent', 'scripts', 'build-svcd.ts'), '--quiet'],
  };
  if (!lockChanged) return [build];
  return [
    {
      what: 'dependencies installed (npm ci --omit=dev)',
      argv: ['npm', 'ci', '--omit=dev', '--workspace', 'packages/agent', '--no-audit', '--no-fund'],
    },
    build,
  ];
}

/** apt, not svcd, upgrades the Debian package's files (both packages: svcd depends on svc of its version). */
export function packagedRefusal(version: string | undefined, arch: string): string {
  const v = version === undefined ? '<version>' : releaseVersionOfTag(version);
  return `update: this agent was installed from the Debian package: upgrade it with apt (apt install ./svc_${v}_${arch}.deb ./svcd_${v}_${arch}.deb, or apt upgrade from the repository it came from)`;
}

/** An archive unpacked somewhere else than <root>/releases/<version>: there is no place for the next one. */
export const unpackedRefusal = (dir: string): string =>
  `update: this release archive is unpacked in ${dir}, not as <root>/releases/<version> run through <root>/current: install it that way (docs/agent.md "Release install") to update it from SVC_RELEASE_URL`;

export async function selfUpdate(payload: CommandPayloads['update'], ctx: CommandContext): Promise<Outcome> {
  const install = ctx.host.install;
  if (install.kind === 'release') return releaseUpdate(install, payload, ctx);
  if (install.kind === 'packaged') return failure(packagedRefusal(payload.version, debianArch()));
  if (install.kind === 'unpacked') return failure(unpackedRefusal(install.dir));
  if (install.kind === 'image') return failure(NO_GIT_DIRECTORY);
  return gitUpdate(install.dir, payload, ctx);
}

const debianArch = (): string => (process.arch === 'x64' ? 'amd64' : process.arch);

async function gitUpdate(dir: string, payload: CommandPayloads['update'], ctx: CommandContext): Promise<Outcome> {
  const git = (args: string[]): Promise<ProcessRun> =>
    runProcess(['git', '-C', dir, ...args], {
      env: { ...ctx.host.childEnv, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      deadline: ctx.deadline,
      onStart: ctx.onChild,
    });
  const inside = await git(['rev-parse', '--is-inside-work-tree']);
  if (inside.exitCode !== 0 || inside.stdout.trim() !== 'true')
    return failure(`update: needs a git checkout: the agent's install directory is not one\n${inside.stderr}`);
  const before = (await git(['rev-parse', '--verify', 'HEAD'])).stdout.trim();
  const branch = payload.branch ?? DEFAULT_BRANCH;
  const exists = (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])).exitCode === 0;
  let log = '';
  for (const step of updateSteps(payload, exists)) {
    const run = await git(step);
    log += run.stdout;
    if (run.exitCode !== 0) return fromProcess({ ...run, stdout: log, stderr: `git ${step[0]} failed\n${run.stderr}` });
  }
  const after = (await git(['rev-parse', '--verify', 'HEAD'])).stdout.trim();
  const to = payload.version ?? branch;
  if (after === before)
    return done(`${log}already up to date at ${after} (${to}); configuration reloaded\n`, { after: 'reload' });
  log += `updated ${before} -> ${after} (${to})\n`;
  const lockChanged = (await git(['diff', '--quiet', before, after, '--', 'package-lock.json'])).exitCode !== 0;
  for (const step of installSteps(lockChanged)) {
    const run = await runProcess(step.argv, {
      cwd: dir,
      env: ctx.host.childEnv,
      deadline: ctx.deadline,
      onStart: ctx.onChild,
    });
    if (run.exitCode !== 0)
      return fromProcess({
        ...run,
        stdout: log,
        stderr: `${step.what} failed after the checkout moved\n${run.stderr}`,
      });
    log += `${step.what}\n`;
  }
  return done(`${log}restarting\n`, { after: 'restart' });
}
