import fs from 'node:fs';
import path from 'node:path';
import { CLIENT_PACKAGE_MARKER, CLIENT_RELEASE_MARKER } from '@svc/protocol';

/**
 * How this agent was installed, which decides what `update` does (docs/agent/commands.md):
 *   checkout  a git clone (packages/agent two levels below its root): git fetch and checkout;
 *   release   a client archive unpacked as <root>/releases/<version>, run through <root>/current:
 *             the next release downloaded beside it and `current` switched;
 *   unpacked  a client archive unpacked anywhere else: refused (no place for a second release);
 *   packaged  the Debian package's /usr/lib/svc: refused, apt upgrades it;
 *   image     none of these (a container): refused, a new image is deployed.
 */
export type Install =
  | { kind: 'checkout'; dir: string }
  | { kind: 'release'; root: string; version: string }
  | { kind: 'unpacked'; dir: string; version: string }
  | { kind: 'packaged'; version: string }
  | { kind: 'image' };

const markerOf = (dir: string, name: string): string | null => {
  try {
    return fs.readFileSync(path.join(dir, name), 'utf8').trim();
  } catch {
    return null;
  }
};

/** `agentDir`: the folder holding bin/svcd (the archive's root, or packages/agent of a checkout), symlinks resolved. */
export function installOf(agentDir: string): Install {
  const release = markerOf(agentDir, CLIENT_RELEASE_MARKER);
  if (release !== null) {
    const parent = path.dirname(agentDir);
    return path.basename(parent) === 'releases'
      ? { kind: 'release', root: path.dirname(parent), version: release }
      : { kind: 'unpacked', dir: agentDir, version: release };
  }
  const packaged = markerOf(agentDir, CLIENT_PACKAGE_MARKER);
  if (packaged !== null) return { kind: 'packaged', version: packaged };
  const checkout = path.resolve(agentDir, '..', '..');
  return fs.existsSync(path.join(checkout, '.git')) ? { kind: 'checkout', dir: checkout } : { kind: 'image' };
}

/**
 * The command a restart re-executes: a release install's <root>/current/bin/svcd, so the daemon an
 * `update` switched to is the one that starts (not the old release's own launcher).
 */
export function selfCommandOf(install: Install, agentDir: string): string {
  if (install.kind === 'release') return path.join(install.root, 'current', 'bin', 'svcd');
  return path.join(agentDir, 'bin', 'svcd');
}
