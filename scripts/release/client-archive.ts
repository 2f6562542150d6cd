/**
 * The scanning host's release archive, one per architecture (the JavaScript is the same, the Node
 * runtime differs): `svc` and `svcd`, each one bundled file with its npm packages inside, Node 24,
 * the agent's systemd unit. Installed by unpacking (INSTALL) or by the Debian packages made from it
 * (scripts/release/deb.ts); `svcd`'s `update` command installs a newer one beside it.
 *
 *   svc-client-<version>-linux-<arch>/
 *     bin/svc, bin/svcd   lib/svc.mjs, lib/svcd.mjs   node/bin/node   systemd/svcd.service
 *     INSTALL  VERSION  RELEASE
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleOneFile, bundleSvcd } from '@svc/agent/bundle';
import { CLIENT_RELEASE_MARKER, clientArchiveFolder, clientArchiveName } from '@svc/protocol';
import { type Arch, addNode, ROOT, releaseDir, stage, tarGz, type Versions, write } from './common.ts';
import { installText, writeLauncher } from './texts.ts';

/** The bundles are the same for every architecture: made once per build. */
export interface ClientBundles {
  svc: string;
  svcd: string;
}

export async function bundleClient(): Promise<ClientBundles> {
  const svc = await bundleOneFile(path.join(ROOT, 'packages', 'client', 'src', 'cli', 'main.ts'));
  return { svc: svc.code, svcd: (await bundleSvcd()).code };
}

/** The checkout's agent unit with another daemon path and header comment (`header` replaces the leading comment lines). */
export function releaseAgentUnit(checkoutUnit: string, execPath: string, header: string, doc: string): string {
  const body = checkoutUnit.slice(checkoutUnit.indexOf('[Unit]'));
  const out = body.split('\n').map((line) => {
    if (line.startsWith('ExecStart=')) return line.replace(/^ExecStart=\S+/, `ExecStart=${execPath}`);
    if (line.startsWith('Documentation=')) return `Documentation=file://${doc}`;
    return line;
  });
  if (!out.some((l) => l.startsWith(`ExecStart=${execPath} `))) throw new Error('svcd.service: no ExecStart line');
  return header + out.join('\n');
}

const RELEASE_HEADER = `# svcd, the svc agent daemon, as a systemd service, from the release archive: releases unpacked in
# /opt/svc/releases/<version>, /opt/svc/current the active one (svcd's \`update\` switches it),
# configs in /etc/svc/configs (owned by svc, mode 700), state in /var/lib/svc.
`;

export function buildClientArchive(v: Versions, arch: Arch, bundles: ClientBundles): string {
  const name = clientArchiveFolder(v.client, arch);
  const dir = path.join(stage(name), name);
  write(path.join(dir, 'lib', 'svc.mjs'), bundles.svc);
  write(path.join(dir, 'lib', 'svcd.mjs'), bundles.svcd);
  addNode(dir, arch, v.node);
  writeLauncher(dir, 'svc', '--disable-warning=ExperimentalWarning --max-semi-space-size=4 "$root/lib/svc.mjs"');
  // The daemon idles for months: a small young generation and V8's lite mode (bench/README.md, "Idle agent daemon").
  writeLauncher(
    dir,
    'svcd',
    '--disable-warning=ExperimentalWarning --max-semi-space-size=1 --lite-mode "$root/lib/svcd.mjs"',
  );
  const unit = fs.readFileSync(path.join(ROOT, 'packages', 'agent', 'systemd', 'svcd.service'), 'utf8');
  write(
    path.join(dir, 'systemd', 'svcd.service'),
    releaseAgentUnit(unit, '/opt/svc/current/bin/svcd', RELEASE_HEADER, '/opt/svc/current/INSTALL'),
  );
  write(path.join(dir, 'VERSION'), `svc ${v.client} (commit ${v.commit}, Node ${v.node}, linux-${arch})\n`);
  write(path.join(dir, CLIENT_RELEASE_MARKER), `${v.client}\n`);
  write(path.join(dir, 'INSTALL'), installText('client', v, arch));
  const out = path.join(releaseDir(), clientArchiveName(v.client, arch));
  tarGz(dir, out, v.epoch);
  return out;
}
