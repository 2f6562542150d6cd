import fs from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../kit/http/request.ts';
import { findProgram } from '../kit/process/find-program.ts';
import { runWithDeadline } from '../kit/process/run.ts';
import { runProgram } from './process.ts';
import type { Installable, ManagerName } from './installable.ts';

/**
 * The platform package manager: which one a host has, how it is asked to install packages
 * without questions, and with which privileges. Building commands is pure (unit-tested per
 * manager); detecting and running them touches the host.
 */
export interface PackageManager {
  name: ManagerName;
  /** The command that is run (apt-get, dnf, yum, apk, brew). */
  command: string;
  /** Where it was found on the PATH. */
  path: string;
}

/** Probed in this order: a host with both apt-get and a Linuxbrew prefers apt-get. */
const MANAGERS: { name: ManagerName; command: string }[] = [
  { name: 'apt', command: 'apt-get' },
  { name: 'dnf', command: 'dnf' },
  { name: 'yum', command: 'yum' },
  { name: 'apk', command: 'apk' },
  { name: 'brew', command: 'brew' },
];

/** The first package manager on the PATH of `env`; on macOS only Homebrew counts. */
export function detectPackageManager(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): PackageManager | null {
  for (const m of MANAGERS) {
    if (platform === 'darwin' && m.name !== 'brew') continue;
    const found = findProgram(m.command, env);
    if (found !== null) return { name: m.name, command: m.command, path: found };
  }
  return null;
}

/** The distinct package names that provide `items`, and the items this manager has no package for. */
export function packagesFor(
  manager: ManagerName,
  items: readonly Installable[],
): { packages: string[]; unavailable: Installable[] } {
  const packages: string[] = [];
  const unavailable: Installable[] = [];
  for (const item of items) {
    const pkg = item.packages[manager];
    if (pkg === null) unavailable.push(item);
    else if (!packages.includes(pkg)) packages.push(pkg);
  }
  return { packages, unavailable };
}

/**
 * How the install runs:
 * - root: directly (apt, dnf, yum, apk when running as root);
 * - sudo: through sudo; `-n` (never ask for a password) unless a terminal can answer a prompt;
 * - user: as the current user (Homebrew, which refuses to run as root);
 * - none: cannot install here; `reason` says why and what to do.
 */
export type Privilege =
  | { kind: 'root' }
  | { kind: 'sudo'; nonInteractive: boolean }
  | { kind: 'user' }
  | { kind: 'none'; reason: string };

export interface PrivilegeFacts {
  isRoot: boolean;
  /** sudo found on the PATH. */
  hasSudo: boolean;
  /** `sudo -n true` succeeded (no password needed now). */
  sudoWithoutPassword: boolean;
  /** stdin and stdout are a terminal, so sudo may ask for a password. */
  interactive: boolean;
}

export function resolvePrivilege(manager: ManagerName, f: PrivilegeFacts): Privilege {
  if (manager === 'brew') {
    return f.isRoot
      ? {
          kind: 'none',
          reason: 'Homebrew refuses to run as root: run this as the user that owns the Homebrew installation',
        }
      : { kind: 'user' };
  }
  if (f.isRoot) return { kind: 'root' };
  if (f.hasSudo && f.sudoWithoutPassword) return { kind: 'sudo', nonInteractive: true };
  if (f.hasSudo && f.interactive) return { kind: 'sudo', nonInteractive: false };
  if (f.hasSudo)
    return {
      kind: 'none',
      reason:
        'not running as root, and sudo needs a password that cannot be asked for without a terminal: run it as root (or from an interactive shell)',
    };
  return { kind: 'none', reason: 'not running as root and sudo is not installed: run it as root' };
}

/** Checks the facts resolvePrivilege needs; runs `sudo -n true` only when not root and sudo exists. */
export async function privilegeFacts(
  env: NodeJS.ProcessEnv,
  opts: { isRoot: boolean; interactive: boolean },
): Promise<PrivilegeFacts> {
  const sudo = findProgram('sudo', env);
  let sudoWithoutPassword = false;
  if (!opts.isRoot && sudo !== null)
    sudoWithoutPassword = (await runProgram(sudo, ['-n', 'true'], { env, timeoutMs: 5000 })).code === 0;
  return { isRoot: opts.isRoot, hasSudo: sudo !== null, sudoWithoutPassword, interactive: opts.interactive };
}

/**
 * One command to run: `env` assignments are shown as a prefix and set in the child's
 * environment (under sudo they are passed as sudo arguments instead, which sudo allows for
 * the usual `ALL` rules).
 */
export interface InstallCommand {
  argv: string[];
  env: Record<string, string>;
}

/** The install command line(s) for `packages`, non-interactive, with the privilege prefix. */
export function installCommands(
  manager: ManagerName,
  packages: readonly string[],
  opts: { privilege: Privilege; aptListsEmpty?: boolean },
): InstallCommand[] {
  if (packages.length === 0) return [];
  const plain: InstallCommand[] = [];
  switch (manager) {
    case 'apt':
      // A fresh image has no package lists: `install` would answer "Unable to locate package".
      if (opts.aptListsEmpty) plain.push({ argv: ['apt-get', 'update'], env: {} });
      // The lock timeout waits for unattended-upgrades (busy at boot on Raspberry Pi OS)
      // instead of failing at once; DEBIAN_FRONTEND keeps debconf from asking anything.
      plain.push({
        argv: ['apt-get', 'install', '-y', '-o', 'DPkg::Lock::Timeout=120', ...packages],
        env: { DEBIAN_FRONTEND: 'noninteractive' },
      });
      break;
    case 'dnf':
    case 'yum':
      plain.push({ argv: [manager, 'install', '-y', ...packages], env: {} });
      break;
    case 'apk':
      plain.push({ argv: ['apk', 'add', '--no-cache', ...packages], env: {} });
      break;
    case 'brew':
      plain.push({ argv: ['brew', 'install', ...packages], env: {} });
      break;
  }
  if (opts.privilege.kind !== 'sudo') return plain;
  const sudo = opts.privilege.nonInteractive ? ['sudo', '-n'] : ['sudo'];
  return plain.map((c) => ({
    argv: [...sudo, ...Object.entries(c.env).map(([k, v]) => `${k}=${v}`), ...c.argv],
    env: {},
  }));
}

/** The command as a shell line a user can paste. */
export function renderCommand(cmd: InstallCommand): string {
  return [...Object.entries(cmd.env).map(([k, v]) => `${k}=${shellQuote(v)}`), ...cmd.argv.map(shellQuote)].join(' ');
}

/** Whether apt has no package lists yet (`apt-get update` never ran on this image). */
export function aptListsEmpty(dir = '/var/lib/apt/lists'): boolean {
  try {
    return !fs.readdirSync(dir).some((n) => /_Packages(\.\w+)?$/.test(n));
  } catch {
    return true;
  }
}

/**
 * PATH for the installer: the user's PATH plus the system directories, because dpkg and the
 * packages' maintainer scripts need /usr/sbin and /sbin, which cron's and sudo users' PATHs
 * often lack.
 */
export function installerPath(userPath: string | undefined): string {
  const dirs = (userPath ?? '').split(path.delimiter).filter((d) => d !== '');
  for (const d of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'])
    if (!dirs.includes(d)) dirs.push(d);
  return dirs.join(path.delimiter);
}

/**
 * Runs one install command. Its output goes to `output` (stderr of the tool, so that --json
 * stdout stays clean); stdin is the terminal when `interactive` (sudo may ask for a password
 * there), otherwise nothing. Resolves with the exit code (null: could not start or killed).
 */
export async function runInstallCommand(
  cmd: InstallCommand,
  opts: { env: NodeJS.ProcessEnv; output: NodeJS.WritableStream; interactive: boolean },
): Promise<{ code: number | null; error?: string }> {
  const env: NodeJS.ProcessEnv = { ...opts.env, ...cmd.env, PATH: installerPath(opts.env['PATH']) };
  const program = findProgram(cmd.argv[0] as string, opts.env) ?? findProgram(cmd.argv[0] as string, env);
  if (program === null) return { code: null, error: `${cmd.argv[0]} not found on the PATH` };
  // No deadline: an install may wait on a password prompt or a package lock for as long as it takes.
  const r = await runWithDeadline([program, ...cmd.argv.slice(1)], {
    env,
    timeoutMs: null,
    // In the client's group as before: a terminal's Ctrl-C stops the install too.
    sameGroup: true,
    inheritStdin: opts.interactive,
    maxOutputBytes: 0,
    onStdout: (d) => opts.output.write(d),
    onStderr: (d) => opts.output.write(d),
  });
  if (r.error !== null) return { code: null, error: r.error.message };
  return r.exitCode === null ? { code: null, error: `killed by ${r.signal}` } : { code: r.exitCode };
}

export interface InstallPlan {
  manager: PackageManager | null;
  /** What was asked for. */
  items: Installable[];
  /** The manager's package names for the items it has packages for. */
  packages: string[];
  /** Items this manager has no package for. */
  unavailable: Installable[];
  privilege: Privilege | null;
  /** The commands to run, or, when blocked, the ones to run by hand (as root). */
  commands: InstallCommand[];
  /** Why the commands cannot be run from here; null when they can. */
  blocked: string | null;
}

/** Works out how `items` would be installed on this host; runs nothing but `sudo -n true`. */
export async function planInstall(
  items: readonly Installable[],
  opts: {
    env: NodeJS.ProcessEnv;
    isRoot: boolean;
    interactive: boolean;
    platform?: NodeJS.Platform;
    aptListsDir?: string;
  },
): Promise<InstallPlan> {
  const manager = detectPackageManager(opts.env, opts.platform);
  if (manager === null) {
    const blocked = `no supported package manager (apt-get, dnf, yum, apk, brew) found on the PATH: install ${items.map((i) => i.id).join(', ')} by hand`;
    return {
      manager,
      items: [...items],
      packages: [],
      unavailable: [...items],
      privilege: null,
      commands: [],
      blocked,
    };
  }
  const { packages, unavailable } = packagesFor(manager.name, items);
  const privilege = resolvePrivilege(
    manager.name,
    await privilegeFacts(opts.env, { isRoot: opts.isRoot, interactive: opts.interactive }),
  );
  const listsEmpty = manager.name === 'apt' ? aptListsEmpty(opts.aptListsDir) : false;
  if (privilege.kind === 'none') {
    const commands = installCommands(manager.name, packages, {
      privilege: { kind: manager.name === 'brew' ? 'user' : 'root' },
      aptListsEmpty: listsEmpty,
    });
    return { manager, items: [...items], packages, unavailable, privilege, commands, blocked: privilege.reason };
  }
  return {
    manager,
    items: [...items],
    packages,
    unavailable,
    privilege,
    commands: installCommands(manager.name, packages, { privilege, aptListsEmpty: listsEmpty }),
    blocked: null,
  };
}

/** "install <id> from <homepage>" hints for items no package provides. */
export function unavailableHint(items: readonly Installable[], manager: ManagerName | null): string {
  return items
    .map((i) => `${i.id}${manager ? ` (no ${manager} package)` : ''}${i.homepage ? `: ${i.homepage}` : ''}`)
    .join('; ');
}
