/**
 * The portal's container image (deploy/container/Containerfile), built with buildah from the
 * portal's release archive on a Debian 12 root file system, and written as a Docker archive
 * (`podman load -i` or `docker load -i`). Docker's format because OCI's has no HEALTHCHECK.
 */
import fs from 'node:fs';
import path from 'node:path';
import { releaseDir, ROOT, run, stage, type Versions } from './common.ts';
import { debianRootTar } from './debian-root.ts';

export const IMAGE_NAME = 'localhost/svc-portal';
const USER = 'svc-portal:x:10001:10001:svc portal:/var/lib/svc-portal:/usr/sbin/nologin';
const GROUP = 'svc-portal:x:10001:';

/** Debian's passwd or group, from the root tar, with the portal's entry added. */
function withEntry(rootTar: string, file: string, entry: string): string {
  const text = run('tar', ['-xOf', rootTar, `./etc/${file}`]);
  return `${text.trimEnd()}\n${entry}\n`;
}

export function buildImage(v: Versions, portalArchive: string): string {
  const context = stage('image');
  const rootTar = debianRootTar();
  fs.linkSync(rootTar, path.join(context, 'debian-root.tar'));
  fs.writeFileSync(path.join(context, 'passwd'), withEntry(rootTar, 'passwd', USER));
  fs.writeFileSync(path.join(context, 'group'), withEntry(rootTar, 'group', GROUP));
  fs.mkdirSync(path.join(context, 'data'));
  run('tar', ['-xzf', portalArchive, '-C', context]);
  fs.renameSync(path.join(context, path.basename(portalArchive, '.tar.gz')), path.join(context, 'svc-portal'));

  const tag = `${IMAGE_NAME}:${v.portal}`;
  run('buildah', [
    'build',
    '--quiet',
    '--format=docker',
    `--timestamp=${v.epoch}`,
    '--label',
    `org.opencontainers.image.version=${v.portal}`,
    '--label',
    `org.opencontainers.image.revision=${v.commit}`,
    '-f',
    path.join(ROOT, 'deploy', 'container', 'Containerfile'),
    '-t',
    tag,
    context,
  ]);
  const out = path.join(releaseDir(), `svc-portal-${v.portal}-image.tar`);
  fs.rmSync(out, { force: true });
  run('buildah', ['push', '--quiet', tag, `docker-archive:${out}:${tag}`]);
  // The archive is the artifact: nothing is left in this machine's image store (`podman load` it).
  run('buildah', ['rmi', tag]);
  return out;
}
