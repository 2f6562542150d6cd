/**
 * The client release's names, shared by what builds it (scripts/release/) and what installs it
 * (svcd's `update`): the archive per version and architecture, its one top folder, the marker
 * files that tell an unpacked archive from the Debian package's tree.
 */

/** In the root of an unpacked client archive: the release's version, one line. */
export const CLIENT_RELEASE_MARKER = 'RELEASE';
/** In /usr/lib/svc of the Debian package instead: apt updates that install, not svcd. */
export const CLIENT_PACKAGE_MARKER = 'PACKAGED';
/** The checksum file beside the archives, as `sha256sum` writes it. */
export const RELEASE_CHECKSUMS = 'SHA256SUMS';

export type ReleaseArch = 'amd64' | 'arm64';

/** Debian's architecture name for Node's `process.arch`, or null for one no archive is built for. */
export function releaseArchOf(nodeArch: string): ReleaseArch | null {
  if (nodeArch === 'x64') return 'amd64';
  if (nodeArch === 'arm64') return 'arm64';
  return null;
}

/** The archive's one top folder: `svc-client-<version>-linux-<arch>`. */
export const clientArchiveFolder = (version: string, arch: ReleaseArch): string =>
  `svc-client-${version}-linux-${arch}`;

export const clientArchiveName = (version: string, arch: ReleaseArch): string =>
  `${clientArchiveFolder(version, arch)}.tar.gz`;

/** The `update` payload's tag `vX.Y.Z` as the release names it (`X.Y.Z`, the packages' version). */
export const releaseVersionOfTag = (tag: string): string => tag.replace(/^v/, '');

/** A release version as folder names carry it: X.Y.Z, each a whole number. */
export const RELEASE_VERSION_PATTERN = /^\d+\.\d+\.\d+$/;
