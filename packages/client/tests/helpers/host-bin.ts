import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A PATH made to order for the host tools' tests: a temp directory holding symlinks to the
 * machine's real programs (so the tools under test run them for real) and small fake scripts,
 * and nothing else. Leaving a name out makes that program "missing" for the process run with
 * PATH=<dir>, without touching the machine.
 */

/** What tools/*.sh and packages/client/bin/svc themselves need (node comes from the repo's node_modules). */
export const SHIM_TOOLS = ['bash', 'dirname', 'readlink'];
/** The core tools of the catalogue (host-checks/tools.ts). */
export const CORE_TOOLS = ['curl', 'openssl', 'jq', 'git'];

/** The real program's path from the test runner's PATH, or null. */
export function realPath(name: string): string | null {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(path.delimiter)) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

export interface BinDir {
  dir: string;
  /** Symlink the real `name` into the dir (returns false when the machine lacks it). */
  link(name: string): boolean;
  /** Write an executable script called `name`. */
  script(name: string, body: string): string;
  remove(): void;
}

/** A temp bin dir with symlinks to the real `tools` (those the machine has). */
export function makeBinDir(tools: string[]): BinDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bin-'));
  const bin: BinDir = {
    dir,
    link(name) {
      const real = realPath(name);
      if (real === null) return false;
      fs.rmSync(path.join(dir, name), { force: true });
      fs.symlinkSync(real, path.join(dir, name));
      return true;
    },
    script(name, body) {
      const file = path.join(dir, name);
      fs.rmSync(file, { force: true });
      fs.writeFileSync(file, body, { mode: 0o755 });
      return file;
    },
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  for (const t of tools) bin.link(t);
  return bin;
}

/**
 * A fake `apt-get` that appends its arguments (and DEBIAN_FRONTEND) to `logFile` and exits
 * `exitCode`. With `provides`, an `install` also symlinks those real programs into the bin
 * dir, as if the package had put them on the PATH.
 */
export function fakeAptGet(
  bin: BinDir,
  logFile: string,
  opts: { provides?: string[]; exitCode?: number } = {},
): string {
  const links = (opts.provides ?? [])
    .map((name) => {
      const real = realPath(name);
      if (real === null)
        throw new Error(`${name} is not installed on this machine; the fake apt-get cannot provide it`);
      return `  ln -sf ${q(real)} ${q(path.join(bin.dir, name))}`;
    })
    .join('\n');
  const realBash = realPath('bash') ?? '/bin/bash';
  return bin.script(
    'apt-get',
    `#!${realBash}
printf '%s\\n' "DEBIAN_FRONTEND=\${DEBIAN_FRONTEND:-} $*" >> ${q(logFile)}
if [[ "\${1:-}" == install ]]; then
${links || '  :'}
fi
exit ${opts.exitCode ?? 0}
`,
  );
}

/** A script that writes `marker` when run, then behaves like `then` (shell code). */
export function markerScript(bin: BinDir, name: string, marker: string, then: string): string {
  const realBash = realPath('bash') ?? '/bin/bash';
  return bin.script(name, `#!${realBash}\necho "$0 $*" >> ${q(marker)}\n${then}\n`);
}

/**
 * A `bash` that reports `version` as $BASH_VERSION to the version probe
 * (`bash -c 'echo $BASH_VERSION'`) and is the real bash for everything else (bin/svc itself).
 */
export function bashReporting(bin: BinDir, version: string): string {
  const realBash = realPath('bash') ?? '/bin/bash';
  return bin.script(
    'bash',
    `#!${realBash}\nif [[ "$1" == -c && "$2" == 'echo $BASH_VERSION' ]]; then echo ${q(version)}; exit 0; fi\nexec ${q(realBash)} "$@"\n`,
  );
}

/**
 * Whether `apt-get install -y nmap` would change nothing here (root, apt-get present, nmap
 * installed at its newest version): only then may a test run it for real.
 */
export function aptInstallIsNoop(pkg: string): { ok: true } | { ok: false; reason: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0)
    return { ok: false, reason: 'not running as root' };
  const apt = realPath('apt-get');
  if (apt === null) return { ok: false, reason: 'apt-get is not available' };
  try {
    const sim = execFileSync(apt, ['-s', 'install', pkg], {
      encoding: 'utf8',
      env: { ...process.env, LANG: 'C', LC_ALL: 'C' },
    });
    if (!/\b0 upgraded, 0 newly installed, 0 to remove\b/.test(sim))
      return { ok: false, reason: `apt-get install ${pkg} would change packages here:\n${sim}` };
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `apt-get -s install ${pkg} failed: ${(err as Error).message}` };
  }
}

function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
