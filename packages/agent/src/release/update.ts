import fs from 'node:fs';
import path from 'node:path';
import {
  clientArchiveFolder,
  clientArchiveName,
  type CommandPayloads,
  RELEASE_CHECKSUMS,
  releaseArchOf,
  releaseVersionOfTag,
} from '@svc/protocol';
import { ALLOW_INSECURE_HTTP, insecureHttpAllowed } from '@svc/client/kit';
import { type CommandContext, done, failure, type Outcome } from '../commands/outcome.ts';
import { runProcess } from '../commands/spawn.ts';
import { parseChecksums, ReleaseError } from './checksums.ts';
import {
  checkUnpacked,
  currentVersion,
  markedVersion,
  prune,
  RELEASES,
  releaseLink,
  switchCurrent,
  WORK_PREFIX,
} from './layout.ts';
import {
  download,
  type FetchLimits,
  fetchText,
  locationOf,
  RELEASE_URL_SETTING,
  type ReleaseSource,
  releaseSourceOf,
} from './source.ts';

/**
 * update on a release install: the release `version` from SVC_RELEASE_URL, checked against its
 * SHA256SUMS, unpacked beside the running one as releases/<version>, `current` switched to it,
 * releases older than the previous one removed, then a restart through current/bin/svcd.
 */

/** Bounds of what is fetched: the archive (about 45 MB: Node and two bundles) and its checksum file. */
const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;
const MAX_CHECKSUMS_BYTES = 1024 * 1024;

export const NEEDS_VERSION =
  'update: a release install updates to a release: the payload needs version (vX.Y.Z); branch names a git checkout';

interface Fetched {
  log: string;
}

/** Downloads, verifies and unpacks the archive into releases/<version>. Nothing is left behind on a failure. */
async function install(
  root: string,
  version: string,
  source: ReleaseSource,
  ctx: CommandContext,
  limits: Omit<FetchLimits, 'maxBytes'>,
): Promise<Fetched> {
  const arch = releaseArchOf(process.arch);
  if (arch === null)
    throw new ReleaseError(`no release archive is built for this machine's architecture (${process.arch})`);
  const sumsAt = locationOf(source, RELEASE_CHECKSUMS);
  const sums = parseChecksums(
    await fetchText(source, RELEASE_CHECKSUMS, { ...limits, maxBytes: MAX_CHECKSUMS_BYTES }),
    sumsAt,
  );
  const name = clientArchiveName(version, arch);
  const expected = sums.get(name);
  if (expected === undefined) throw new ReleaseError(`${sumsAt} lists no ${name}`);
  const releases = path.join(root, RELEASES);
  const work = fs.mkdtempSync(path.join(releases, `${WORK_PREFIX}${version}-`));
  try {
    const archive = path.join(work, name);
    const got = await download(source, name, archive, { ...limits, maxBytes: MAX_ARCHIVE_BYTES });
    if (got.sha256 !== expected)
      throw new ReleaseError(
        `checksum mismatch for ${name}: ${RELEASE_CHECKSUMS} says ${expected}, the download is ${got.sha256}; nothing installed`,
      );
    const into = path.join(work, 'unpacked');
    fs.mkdirSync(into);
    const tar = await runProcess(['tar', '-xzf', archive, '-C', into, '--no-same-owner'], {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C' },
      deadline: ctx.deadline,
      onStart: ctx.onChild,
      signal: ctx.signal,
    });
    if (tar.exitCode !== 0)
      throw new ReleaseError(`tar could not unpack ${name} (exit ${tar.exitCode}): ${tar.stderr.trim()}`);
    fs.renameSync(checkUnpacked(into, clientArchiveFolder(version, arch), version), path.join(releases, version));
    return {
      log: `downloaded ${name} (${got.bytes} bytes, SHA-256 as ${RELEASE_CHECKSUMS} says)\ninstalled ${releaseLink(version)}\n`,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export async function releaseUpdate(
  running: { root: string; version: string },
  payload: CommandPayloads['update'],
  ctx: CommandContext,
): Promise<Outcome> {
  if (payload.version === undefined) return failure(NEEDS_VERSION);
  const version = releaseVersionOfTag(payload.version);
  if (version === running.version) return done(`already at ${version}; configuration reloaded\n`, { after: 'reload' });
  const { root } = running;
  const env = ctx.host.childEnv;
  try {
    const previous = currentVersion(root);
    const target = path.join(root, RELEASES, version);
    let log: string;
    if (fs.existsSync(target)) {
      const marked = markedVersion(target);
      if (marked !== version)
        throw new ReleaseError(
          `${target} is not release ${version} (its RELEASE says ${marked ?? 'nothing'}): remove it and update again`,
        );
      log = `${releaseLink(version)} already installed\n`;
    } else {
      const allowInsecureHttp = insecureHttpAllowed(env[ALLOW_INSECURE_HTTP]);
      const source = releaseSourceOf(env[RELEASE_URL_SETTING], allowInsecureHttp);
      const deadline = AbortSignal.timeout(Math.max(0, ctx.deadline - Date.now()));
      const signal = ctx.signal === undefined ? deadline : AbortSignal.any([deadline, ctx.signal]);
      ({ log } = await install(root, version, source, ctx, { allowInsecureHttp, signal }));
    }
    switchCurrent(root, version);
    log += `current -> ${releaseLink(version)} (was ${previous === null ? 'unset' : releaseLink(previous)})\n`;
    const keep = new Set([version, running.version, ...(previous === null ? [] : [previous])]);
    for (const removed of prune(root, keep)) log += `removed ${releaseLink(removed)}\n`;
    return done(`${log}restarting\n`, { after: 'restart' });
  } catch (err) {
    if (err instanceof ReleaseError) return failure(`update: ${err.message}`);
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === 'string') return failure(`update: ${e.message}`);
    throw err;
  }
}
