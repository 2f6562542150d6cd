import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { clientArchiveFolder, clientArchiveName, releaseArchOf } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClientArchive, bundleClient } from '../scripts/release/client-archive.ts';
import { releaseDir, removeStages, setReleaseDir, versions } from '../scripts/release/common.ts';
import { finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { newAgentId, portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * `update` on a release install with the real client archive (scripts/release/client-archive.ts,
 * this machine's architecture): installed as <root>/releases/<v> with <root>/current, a second
 * release (the same archive labelled as the next version) served over HTTP on 127.0.0.1, the
 * daemon run from current/bin/svcd against a real portal. Also a tampered release and the Debian
 * package's tree, which `update` leaves to apt.
 */

const fixture = usePortalWithKey({ tier: 'business' });
const run = promisify(execFile);
const arch = releaseArchOf(process.arch) ?? 'amd64';
let dir: string;
let root: string;
let published: string;
let built: string;
let server: http.Server;
let releaseUrl: string;
const daemons: SvcdProcess[] = [];
let v1: string;
let v2: string;
let v3: string;

/** The built archive's tree as `version` (folder, RELEASE and VERSION rewritten), into `published` with its checksum. */
async function publish(version: string): Promise<void> {
  const stage = fs.mkdtempSync(path.join(dir, 'stage-'));
  await run('tar', ['-xzf', built, '-C', stage]);
  const folder = path.join(stage, clientArchiveFolder(version, arch));
  fs.renameSync(path.join(stage, clientArchiveFolder(v1, arch)), folder);
  fs.writeFileSync(path.join(folder, 'RELEASE'), `${version}\n`);
  fs.writeFileSync(path.join(folder, 'VERSION'), `svc ${version} (relabelled ${v1} for a test)\n`);
  const name = clientArchiveName(version, arch);
  await run('tar', ['-czf', path.join(published, name), '-C', stage, path.basename(folder)]);
  fs.rmSync(stage, { recursive: true, force: true });
  const sum = createHash('sha256')
    .update(fs.readFileSync(path.join(published, name)))
    .digest('hex');
  fs.appendFileSync(path.join(published, 'SHA256SUMS'), `${sum}  ${name}\n`);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-release-update-'));
  const v = versions();
  const [major, minor, patch] = v.client.split('.').map(Number) as [number, number, number];
  v1 = v.client;
  v2 = `${major}.${minor}.${patch + 1}`;
  v3 = `${major}.${minor}.${patch + 2}`;
  // The archive as the release build makes it, written into this test's folder; the build's
  // staging folder removed (and the output folder put back, for the files sharing this worker).
  const previous = releaseDir();
  setReleaseDir(dir);
  try {
    built = buildClientArchive(v, arch, await bundleClient());
  } finally {
    setReleaseDir(previous);
    removeStages();
  }

  root = path.join(dir, 'opt', 'svc');
  fs.mkdirSync(path.join(root, 'releases'), { recursive: true });
  await run('tar', ['-xzf', built, '-C', path.join(root, 'releases')]);
  fs.renameSync(path.join(root, 'releases', clientArchiveFolder(v1, arch)), path.join(root, 'releases', v1));
  fs.symlinkSync(`releases/${v1}`, path.join(root, 'current'));

  published = path.join(dir, 'published');
  fs.mkdirSync(published);
  await publish(v2);
  await publish(v3);
  // v3 tampered after its checksum was written.
  fs.appendFileSync(path.join(published, clientArchiveName(v3, arch)), 'tampered');

  server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/releases\//, ''));
    const file = path.join(published, path.basename(name));
    if (!fs.existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  releaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/releases`;
}, 600_000);

afterAll(async () => {
  for (const d of daemons) await d.stop();
  await new Promise((r) => server?.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

const cmdline = (pid: number): string[] => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

describe('update on a release install', () => {
  it('the next release: downloaded, verified, installed beside, current switched, restarted from it; a tampered one refused', async () => {
    const agentId = newAgentId('release');
    const svcd = await startSvcd({
      agentId,
      command: path.join(root, 'current', 'bin', 'svcd'),
      configs: { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, { SVC_RELEASE_URL: releaseUrl }) },
    });
    daemons.push(svcd);
    await svcd.waitFor(/msg="svcd started"/);
    await untilRegistered(fixture.portal, agentId);
    expect(cmdline(svcd.pid)).toContain(path.join(root, 'releases', v1, 'lib', 'svcd.mjs'));

    const name = clientArchiveName(v2, arch);
    const size = fs.statSync(path.join(published, name)).size;
    const update = await queueCommand(fixture.portal, agentId, 'update', { version: `v${v2}` });
    expect(await finishedCommand(fixture.portal, update, 120_000)).toMatchObject({
      command: { status: 'completed' },
      result: {
        exit_code: 0,
        stdout:
          `downloaded ${name} (${size} bytes, SHA-256 as SHA256SUMS says)\ninstalled releases/${v2}\n` +
          `current -> releases/${v2} (was releases/${v1})\nrestarting\n`,
        stderr: '',
      },
    });
    expect(fs.readlinkSync(path.join(root, 'current'))).toBe(`releases/${v2}`);
    expect(fs.readdirSync(path.join(root, 'releases')).sort()).toEqual([v1, v2]);

    // The same process, re-executed through the new current/bin/svcd: the new release's Node runs its bundle.
    await expect.poll(() => (svcd.output().match(/msg="svcd started"/g) ?? []).length, { timeout: 60_000 }).toBe(2);
    expect(svcd.output()).toContain('re-executing in place');
    expect(svcd.child.exitCode).toBeNull();
    expect(cmdline(svcd.pid)).toContain(path.join(root, 'releases', v2, 'lib', 'svcd.mjs'));
    expect(fs.readlinkSync(`/proc/${svcd.pid}/exe`)).toBe(path.join(root, 'releases', v2, 'node', 'bin', 'node'));

    const again = await queueCommand(fixture.portal, agentId, 'update', { version: `v${v2}` });
    expect((await finishedCommand(fixture.portal, again)).result).toMatchObject({
      exit_code: 0,
      stdout: `already at ${v2}; configuration reloaded\n`,
    });

    const tampered = await queueCommand(fixture.portal, agentId, 'update', { version: `v${v3}` });
    const failed = await finishedCommand(fixture.portal, tampered, 120_000);
    expect(failed.command.status).toBe('failed');
    expect(failed.result?.exit_code).toBe(1);
    expect(failed.result?.stderr).toMatch(
      new RegExp(
        `^update: checksum mismatch for ${clientArchiveName(v3, arch).replaceAll('.', '\\.')}: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; nothing installed\\n$`,
      ),
    );
    expect(fs.readlinkSync(path.join(root, 'current'))).toBe(`releases/${v2}`);
    expect(fs.readdirSync(path.join(root, 'releases')).sort()).toEqual([v1, v2]);
    expect(svcd.output().match(/msg="svcd started"/g)).toHaveLength(2);
  });
});

describe('update on the Debian package tree', () => {
  it('is refused with the apt command', async () => {
    // The package's /usr/lib/svc: the archive's tree with PACKAGED instead of RELEASE (scripts/release/deb.ts).
    const lib = path.join(dir, 'usr', 'lib', 'svc');
    fs.mkdirSync(path.dirname(lib), { recursive: true });
    await run('tar', ['-xzf', built, '-C', path.dirname(lib)]);
    fs.renameSync(path.join(path.dirname(lib), clientArchiveFolder(v1, arch)), lib);
    fs.rmSync(path.join(lib, 'RELEASE'));
    fs.writeFileSync(path.join(lib, 'PACKAGED'), `${v1}\n`);
    const agentId = newAgentId('packaged');
    const svcd = await startSvcd({
      agentId,
      command: path.join(lib, 'bin', 'svcd'),
      configs: { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, { SVC_RELEASE_URL: releaseUrl }) },
    });
    daemons.push(svcd);
    await untilRegistered(fixture.portal, agentId);
    const update = await queueCommand(fixture.portal, agentId, 'update', { version: `v${v2}` });
    const failed = await finishedCommand(fixture.portal, update);
    expect(failed).toMatchObject({
      command: { status: 'failed' },
      result: {
        exit_code: 1,
        stdout: '',
        stderr: `update: this agent was installed from the Debian package: upgrade it with apt (apt install ./svc_${v2}_${arch}.deb ./svcd_${v2}_${arch}.deb, or apt upgrade from the repository it came from)\n`,
      },
    });
    expect(svcd.output().match(/msg="svcd started"/g)).toHaveLength(1);
  });
});
