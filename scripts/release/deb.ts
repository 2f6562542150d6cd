/**
 * Debian packages for scanning hosts, made from the client archive of the same architecture:
 *   svc:  the archive's tree in /usr/lib/svc (both bundles and Node), /usr/bin/svc and /usr/bin/svcd;
 *   svcd: the agent's systemd unit, its user, /etc/svc/configs and /var/lib/svc (deploy/debian/svcd.*).
 * Built with dpkg-deb; installable with `apt install ./svc_<version>_<arch>.deb`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Arch, releaseDir, ROOT, run, stage, type Versions, write } from './common.ts';
import { releaseAgentUnit } from './client-archive.ts';
import { CLIENT_PACKAGE_MARKER, CLIENT_RELEASE_MARKER } from '@svc/protocol';

const MAINTAINER = 'svc maintainers <root@localhost>';

interface Control {
  package: string;
  arch: Arch;
  version: string;
  depends: string;
  recommends?: string;
  suggests?: string;
  description: string;
  installedKiB: number;
}

function controlText(c: Control): string {
  const fields = [
    `Package: ${c.package}`,
    `Version: ${c.version}`,
    `Architecture: ${c.arch}`,
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${c.installedKiB}`,
    `Depends: ${c.depends}`,
    c.recommends ? `Recommends: ${c.recommends}` : '',
    c.suggests ? `Suggests: ${c.suggests}` : '',
    'Section: net',
    'Priority: optional',
    `Description: ${c.description}`,
  ];
  return `${fields.filter(Boolean).join('\n')}\n`;
}

const sizeKiB = (dir: string): number => Number(run('du', ['-sk', '--apparent-size', dir]).split('\t')[0]);

function buildDeb(root: string, c: Omit<Control, 'installedKiB'>, epoch: number): string {
  const control = { ...c, installedKiB: sizeKiB(root) };
  write(path.join(root, 'DEBIAN', 'control'), controlText(control));
  const out = path.join(releaseDir(), `${c.package}_${c.version}_${c.arch}.deb`);
  fs.mkdirSync(releaseDir(), { recursive: true });
  // dpkg-deb stamps every file with SOURCE_DATE_EPOCH: the same commit gives the same package.
  // xz level 1, not dpkg's 6: the bundled Node compresses in 13 s of CPU instead of 78, for a
  // package 17 % larger (docs/decisions.md#release-artifacts-from-one-builder).
  run('dpkg-deb', ['--root-owner-group', '-Zxz', '-z1', '--build', root, out], root, {
    ...process.env,
    SOURCE_DATE_EPOCH: String(epoch),
  });
  return out;
}

/** `archiveDir` is the unpacked client archive (svc-client-<version>-linux-<arch>/). */
export function buildDebs(v: Versions, arch: Arch, archiveDir: string): string[] {
  const svcRoot = stage(`deb-svc-${arch}`);
  const lib = path.join(svcRoot, 'usr', 'lib', 'svc');
  fs.cpSync(archiveDir, lib, { recursive: true, verbatimSymlinks: true });
  fs.rmSync(path.join(lib, 'systemd'), { recursive: true });
  fs.rmSync(path.join(lib, CLIENT_RELEASE_MARKER));
  write(path.join(lib, CLIENT_PACKAGE_MARKER), `${v.client}\n`);
  const doc = path.join(svcRoot, 'usr', 'share', 'doc', 'svc');
  fs.mkdirSync(doc, { recursive: true });
  fs.renameSync(path.join(lib, 'INSTALL'), path.join(doc, 'INSTALL'));
  fs.renameSync(path.join(lib, 'node', 'LICENSE'), path.join(doc, 'node-LICENSE'));
  fs.mkdirSync(path.join(svcRoot, 'usr', 'bin'), { recursive: true });
  for (const bin of ['svc', 'svcd']) fs.symlinkSync(`../lib/svc/bin/${bin}`, path.join(svcRoot, 'usr', 'bin', bin));
  const svc = buildDeb(
    svcRoot,
    {
      package: 'svc',
      arch,
      version: v.client,
      depends: 'nmap, ca-certificates',
      recommends: 'curl, openssl, jq',
      suggests: 'svcd, testssl.sh, sslscan, whatweb, masscan, bind9-dnsutils, snmp, git',
      description: `scan collection client: nmap scans, detection rules, sessions uploaded to the portal\n svc ${v.client} with its own Node ${v.node} runtime in /usr/lib/svc.`,
    },
    v.epoch,
  );

  const svcdRoot = stage(`deb-svcd-${arch}`);
  const unit = fs.readFileSync(path.join(ROOT, 'packages', 'agent', 'systemd', 'svcd.service'), 'utf8');
  write(path.join(svcdRoot, 'lib', 'systemd', 'system', 'svcd.service'), packagedUnit(unit));
  const svcdDoc = path.join(svcdRoot, 'usr', 'share', 'doc', 'svcd');
  fs.mkdirSync(svcdDoc, { recursive: true });
  fs.copyFileSync(path.join(doc, 'INSTALL'), path.join(svcdDoc, 'INSTALL'));
  for (const script of ['postinst', 'prerm', 'postrm']) {
    const to = path.join(svcdRoot, 'DEBIAN', script);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'deploy', 'debian', `svcd.${script}`), to);
    fs.chmodSync(to, 0o755);
  }
  const svcd = buildDeb(
    svcdRoot,
    {
      package: 'svcd',
      arch,
      version: v.client,
      depends: `svc (= ${v.client}), passwd`,
      description: `svc agent daemon: heartbeats, portal commands and scheduled scans\n The systemd unit svcd.service, its user svc, configs in /etc/svc/configs, state in /var/lib/svc.`,
    },
    v.epoch,
  );
  return [svc, svcd];
}

const PACKAGED_HEADER = `# svcd, the svc agent daemon, as a systemd service, installed by the svcd package: the daemon in
# /usr/lib/svc, configs in /etc/svc/configs (owned by svc, mode 700: push_config writes
# .c2_overrides.conf there), state in /var/lib/svc.
`;

/**
 * The packaged unit: the daemon from /usr/lib/svc, nothing under /opt to write (apt updates it), and
 * started only once a config exists.
 */
export function packagedUnit(checkoutUnit: string): string {
  let unit = releaseAgentUnit(checkoutUnit, '/usr/lib/svc/bin/svcd', PACKAGED_HEADER, '/usr/share/doc/svcd/INSTALL');
  if (!/^ReadWritePaths=.* \/opt\/svc$/m.test(unit))
    throw new Error('svcd.service: ReadWritePaths does not end in /opt/svc');
  unit = unit.replace(/^(ReadWritePaths=.*) \/opt\/svc$/m, '$1');
  unit = unit.replace(/^# \/opt\/svc: the `update` command.*\n/m, '');
  return unit.replace(
    /^\[Unit\]\n/m,
    '[Unit]\n# Installed by the svcd package; waits for a config (/usr/share/doc/svcd/INSTALL).\nConditionPathExistsGlob=/etc/svc/configs/*.conf\n',
  );
}
