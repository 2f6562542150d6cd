/**
 * The portal's release archive: the server bundled into lib/ (our code in a few files, the npm
 * packages it imports beside it in lib/node_modules, production dependencies only), the built
 * console, Node 24, launchers and the systemd unit. Runs with nothing else from this repository.
 *
 *   svc-portal-<version>/
 *     bin/svc-portal, bin/svc-portal-backup, bin/svc-portal-restore, bin/svc-portal-feeds-import
 *     lib/*.mjs, lib/node_modules/   node/bin/node   web/   systemd/   INSTALL  VERSION
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Arch, addNode, ROOT, releaseDir, run, stage, tarGz, type Versions, write } from './common.ts';
import { installText, writeLauncher } from './texts.ts';

const PORTAL_SRC = path.join(ROOT, 'packages', 'portal', 'src');
/** Entry points of the bundle: the server and the operations' command lines. */
const ENTRIES = {
  portal: path.join(PORTAL_SRC, 'main.ts'),
  backup: path.join(PORTAL_SRC, 'operations', 'backup', 'cli.ts'),
  'feeds-import': path.join(PORTAL_SRC, 'operations', 'vuln-feeds', 'cli.ts'),
};

/** Only our own code is bundled: npm packages may load files or native addons from their own folders. */
const isNpmPackage = (id: string): boolean => !id.startsWith('.') && !path.isAbsolute(id) && !id.startsWith('@svc/');

async function bundle(libDir: string): Promise<void> {
  const { build } = await import('rolldown');
  await build({
    input: ENTRIES,
    platform: 'node',
    logLevel: 'warn',
    external: isNpmPackage,
    output: {
      dir: libDir,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: 'chunks/[name]-[hash].mjs',
      // Names kept: a stack trace in the log still reads.
      minify: { compress: true, mangle: false, codegen: { removeWhitespace: false } },
    },
  });
}

/** The installed folders of the portal's production dependencies, outermost first. */
function productionPackages(): string[] {
  const listed = run('npm', ['ls', '--omit=dev', '--all', '--parseable', '--workspace', '@svc/portal'])
    .split('\n')
    .filter((p) => p.startsWith(path.join(ROOT, 'node_modules') + path.sep))
    .filter((p) => !p.includes(`${path.sep}@svc${path.sep}`));
  const sorted = [...new Set(listed)].sort();
  // A nested node_modules comes with its parent's folder.
  return sorted.filter((p, i) => !sorted.slice(0, i).some((q) => p.startsWith(q + path.sep)));
}

/** Type declarations, packages' TypeScript type tests and source maps: nothing Node loads. */
const SKIPPED = /\.([cm]?ts|map)$/;

function copyPackages(libDir: string): void {
  for (const dir of productionPackages()) {
    const to = path.join(libDir, path.relative(ROOT, dir));
    fs.cpSync(fs.realpathSync(dir), to, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !SKIPPED.test(src),
    });
  }
}

/** The checkout's unit, pointed at the archive installed in /opt/svc-portal. */
export function releaseUnit(checkoutUnit: string): string {
  const replace = (text: string, from: RegExp, to: string): string => {
    if (!from.test(text)) throw new Error(`svc-portal.service: no line matches ${from}`);
    return text.replace(from, to);
  };
  let unit = checkoutUnit;
  unit = replace(unit, /^# svc-portal,[\s\S]*?(?=\[Unit\])/m, RELEASE_UNIT_HEADER);
  unit = replace(unit, /^Documentation=.*$/m, 'Documentation=file:///opt/svc-portal/INSTALL');
  unit = replace(unit, /^WorkingDirectory=.*$/m, 'WorkingDirectory=/opt/svc-portal');
  unit = replace(unit, /^# Node 24 from the checkout.*\n/m, '');
  unit = replace(unit, /^ExecStart=.*$/m, 'ExecStart=/opt/svc-portal/bin/svc-portal');
  unit = replace(unit, /^ExecStartPost=.*$/m, 'ExecStartPost=/opt/svc-portal/systemd/wait-ready.sh');
  return unit;
}

const RELEASE_UNIT_HEADER = `# svc-portal, the scan collection portal, as a systemd service, from the release archive
# unpacked in /opt/svc-portal (INSTALL): settings in /etc/svc-portal/portal.env, data (embedded
# PostgreSQL, session files, identity key) in /var/lib/svc-portal.
`;

export async function buildPortalArchive(v: Versions, arch: Arch): Promise<string> {
  const name = `svc-portal-${v.portal}-linux-${arch}`;
  const dir = path.join(stage(name), name);
  const lib = path.join(dir, 'lib');
  await bundle(lib);
  copyPackages(lib);
  addNode(dir, arch, v.node);
  fs.cpSync(path.join(ROOT, 'packages', 'web', 'dist'), path.join(dir, 'web'), { recursive: true });

  const systemd = path.join(ROOT, 'packages', 'portal', 'systemd');
  write(
    path.join(dir, 'systemd', 'svc-portal.service'),
    releaseUnit(fs.readFileSync(path.join(systemd, 'svc-portal.service'), 'utf8')),
  );
  fs.copyFileSync(path.join(systemd, 'wait-ready.sh'), path.join(dir, 'systemd', 'wait-ready.sh'));
  fs.chmodSync(path.join(dir, 'systemd', 'wait-ready.sh'), 0o755);

  // The console's folder is the archive's web/ unless the operator names another.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template.
  const web = 'export SVC_WEB_DIR="${SVC_WEB_DIR:-$root/web}"';
  writeLauncher(dir, 'svc-portal', '--heap-growing-percent=100 "$root/lib/portal.mjs"', web);
  writeLauncher(dir, 'svc-portal-backup', '"$root/lib/backup.mjs" backup');
  writeLauncher(dir, 'svc-portal-restore', '"$root/lib/backup.mjs" restore');
  writeLauncher(dir, 'svc-portal-feeds-import', '"$root/lib/feeds-import.mjs"');

  write(path.join(dir, 'VERSION'), `svc-portal ${v.portal} (commit ${v.commit}, Node ${v.node}, linux-${arch})\n`);
  write(path.join(dir, 'INSTALL'), installText('portal', v, arch));
  const out = path.join(releaseDir(), `${name}.tar.gz`);
  tarGz(dir, out, v.epoch);
  return out;
}
