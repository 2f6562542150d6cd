/** The small texts every archive carries: its launchers and its INSTALL (deploy/release/*.INSTALL). */
import fs from 'node:fs';
import path from 'node:path';
import { type Arch, ROOT, type Versions, write } from './common.ts';

/**
 * A POSIX sh launcher: the archive's Node (SVC_NODE names another) runs `args`. The archive's
 * root is found through symlinks, so /usr/bin/svc -> /opt/svc/bin/svc works.
 */
function launcher(name: string, args: string, extra = ''): string {
  return `#!/bin/sh
# ${name}, from the svc release archive: the archive's own Node runs its bundle.
set -eu
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
${extra ? `${extra}\n` : ''}exec "\${SVC_NODE:-$root/node/bin/node}" ${args} "$@"
`;
}

/** Writes `<dir>/bin/<name>`, an executable launcher of `args` (see launcher). */
export function writeLauncher(dir: string, name: string, args: string, extra = ''): void {
  write(path.join(dir, 'bin', name), launcher(name, args, extra), 0o755);
}

/** deploy/release/<kind>.INSTALL with its @VERSION@, @ARCH@ and @NODE@ filled in. */
export function installText(kind: 'portal' | 'client', v: Versions, arch: Arch): string {
  const template = fs.readFileSync(path.join(ROOT, 'deploy', 'release', `${kind}.INSTALL`), 'utf8');
  return template
    .replaceAll('@VERSION@', kind === 'portal' ? v.portal : v.client)
    .replaceAll('@ARCH@', arch)
    .replaceAll('@NODE@', v.node);
}
