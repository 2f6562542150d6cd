import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientArchiveName, releaseArchOf, releaseVersionOfTag } from '@svc/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeCommand } from '../src/commands/dispatch.ts';
import type { CommandContext } from '../src/commands/outcome.ts';
import { NO_GIT_DIRECTORY } from '../src/commands/self-update.ts';
import { installOf, selfCommandOf } from '../src/install-kind.ts';
import { parseChecksums } from '../src/release/checksums.ts';
import { releaseSourceOf } from '../src/release/source.ts';
import { NEEDS_VERSION } from '../src/release/update.ts';
import type { CommandHost } from '../src/types.ts';

/**
 * update on the install kinds, with real files: release archives made here with tar (a folder
 * with RELEASE and bin/svcd, as scripts/release/client-archive.ts lays them out) in a directory
 * named by SVC_RELEASE_URL. The slow e2e/agent-update-release.test.ts runs the built archive.
 */

const ARCH = releaseArchOf(process.arch) ?? 'amd64';
const HEX = 'a'.repeat(64);
let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-release-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const command = (payload: Record<string, unknown>) =>
  ({
    id: 9,
    command_type: 'update',
    payload,
    priority: 0,
    created_by: 'admin@test.local',
    created_at: new Date().toISOString(),
  }) as Parameters<typeof executeCommand>[0];

function ctxFor(install: CommandHost['install'], env: NodeJS.ProcessEnv = {}): CommandContext {
  const quiet = () => undefined;
  const host = {
    agentId: 'svcd_test0001',
    childEnv: { PATH: process.env['PATH'], ...env },
    log: { debug: quiet, info: quiet, warning: quiet, error: quiet },
    install,
  } as unknown as CommandHost;
  return { host, deadline: Date.now() + 20_000, onChild: quiet };
}

describe('SHA256SUMS', () => {
  it('reads sha256sum lines (text and binary mode, CRLF, blank lines), names to lower-case hex', () => {
    const sums = parseChecksums(
      `${HEX.toUpperCase()}  svc-client-4.2.3-linux-amd64.tar.gz\r\n\n${'b'.repeat(64)} *svc_4.2.3_amd64.deb\n`,
      'x',
    );
    expect([...sums]).toEqual([
      ['svc-client-4.2.3-linux-amd64.tar.gz', HEX],
      ['svc_4.2.3_amd64.deb', 'b'.repeat(64)],
    ]);
  });

  it.each([
    [`${HEX} one-space.tar.gz\n`, 'SUMS line 1 is not "<sha256>  <file>": ' + `${HEX} one-space.tar.gz`],
    [`${HEX}  a\nabc  b\n`, 'SUMS line 2 is not "<sha256>  <file>": abc  b'],
    [`${HEX}  a\n${'c'.repeat(64)}  a\n`, 'SUMS lists a twice with different checksums'],
    ['\n\n', 'SUMS lists no file'],
  ])('refuses %j', (text, message) => {
    expect(() => parseChecksums(text, 'SUMS')).toThrow(message);
  });
});

describe('names and settings', () => {
  it('the archive of a version and architecture, the tag as a version', () => {
    expect(clientArchiveName('4.2.4', 'arm64')).toBe('svc-client-4.2.4-linux-arm64.tar.gz');
    expect([releaseArchOf('x64'), releaseArchOf('arm64'), releaseArchOf('riscv64')]).toEqual(['amd64', 'arm64', null]);
    expect(releaseVersionOfTag('v4.2.4')).toBe('4.2.4');
  });

  it('SVC_RELEASE_URL: https, http to this machine, an absolute directory; the rest refused by name', () => {
    expect(releaseSourceOf('https://releases.example/svc', false)).toEqual({
      kind: 'http',
      base: new URL('https://releases.example/svc/'),
    });
    expect(releaseSourceOf(' http://127.0.0.1:8080/r/?x=1 ', false)).toEqual({
      kind: 'http',
      base: new URL('http://127.0.0.1:8080/r/'),
    });
    expect(releaseSourceOf('/srv/releases', false)).toEqual({ kind: 'dir', dir: '/srv/releases' });
    expect(releaseSourceOf('http://mirror.lan/svc', true)).toMatchObject({ kind: 'http' });
    expect(() => releaseSourceOf(undefined, false)).toThrow(/^SVC_RELEASE_URL is not set: /);
    expect(() => releaseSourceOf('http://mirror.lan/svc', false)).toThrow(
      'http://mirror.lan uses plain http to mirror.lan, which is not this machine',
    );
    expect(() => releaseSourceOf('releases/', false)).toThrow(
      'SVC_RELEASE_URL is neither a URL nor an absolute directory path: releases/',
    );
    expect(() => releaseSourceOf('ftp://mirror.lan/', false)).toThrow(
      'ftp://mirror.lan/: only https, http or a directory path',
    );
    expect(() => releaseSourceOf('https://u:p@mirror.lan/', false)).toThrow(
      'SVC_RELEASE_URL must not carry a user or password',
    );
  });
});

describe('install kinds', () => {
  const dir = (...parts: string[]) => {
    const d = path.join(tmp, ...parts);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };

  it('release, unpacked, packaged, checkout, image', () => {
    const release = dir('opt', 'releases', '4.2.3');
    fs.writeFileSync(path.join(release, 'RELEASE'), '4.2.3\n');
    const root = path.join(tmp, 'opt');
    expect(installOf(release)).toEqual({ kind: 'release', root, version: '4.2.3' });
    expect(selfCommandOf(installOf(release), release)).toBe(path.join(root, 'current', 'bin', 'svcd'));

    const unpacked = dir('svc-client-4.2.3-linux-amd64');
    fs.writeFileSync(path.join(unpacked, 'RELEASE'), '4.2.3\n');
    expect(installOf(unpacked)).toEqual({ kind: 'unpacked', dir: unpacked, version: '4.2.3' });

    const packaged = dir('usr', 'lib', 'svc');
    fs.writeFileSync(path.join(packaged, 'PACKAGED'), '4.2.3\n');
    expect(installOf(packaged)).toEqual({ kind: 'packaged', version: '4.2.3' });
    expect(selfCommandOf(installOf(packaged), packaged)).toBe(path.join(packaged, 'bin', 'svcd'));

    const agent = dir('checkout', 'packages', 'agent');
    expect(installOf(agent)).toEqual({ kind: 'image' });
    dir('checkout', '.git');
    expect(installOf(agent)).toEqual({ kind: 'checkout', dir: path.join(tmp, 'checkout') });
  });
});

describe('update refusals', () => {
  it('a packaged install is left to apt', async () => {
    const out = await executeCommand(command({ version: 'v4.2.4' }), ctxFor({ kind: 'packaged', version: '4.2.3' }));
    expect(out).toMatchObject({ ok: false, exitCode: 1, stdout: '' });
    expect(out.stderr).toBe(
      `update: this agent was installed from the Debian package: upgrade it with apt (apt install ./svc_4.2.4_${ARCH}.deb ./svcd_4.2.4_${ARCH}.deb, or apt upgrade from the repository it came from)\n`,
    );
  });

  it('an archive unpacked elsewhere, a container, a release install without a version', async () => {
    const unpacked = await executeCommand(
      command({ version: 'v4.2.4' }),
      ctxFor({ kind: 'unpacked', dir: '/opt/x', version: '4.2.3' }),
    );
    expect(unpacked.stderr).toMatch(
      /^update: this release archive is unpacked in \/opt\/x, not as <root>\/releases\/<version> /,
    );
    expect((await executeCommand(command({}), ctxFor({ kind: 'image' }))).stderr).toBe(`${NO_GIT_DIRECTORY}\n`);
    const release = { kind: 'release', root: tmp, version: '4.2.3' } as const;
    const branch = await executeCommand(command({ branch: 'main' }), ctxFor(release));
    expect(branch).toMatchObject({ ok: false, exitCode: 1, stderr: `${NEEDS_VERSION}\n` });
    // The protocol's rule on `version` holds before anything else.
    const bad = await executeCommand(command({ version: '4.2.4' }), ctxFor(release));
    expect(bad).toMatchObject({ ok: false, exitCode: 2, stderr: 'payload.version must be a version tag vX.Y.Z\n' });
  });
});

describe('update of a release install from a directory', () => {
  let root: string;
  let published: string;

  /** A client archive of `version` as the release build lays it out, optionally with another RELEASE. */
  function publish(version: string, marker = version): void {
    const stage = fs.mkdtempSync(path.join(tmp, 'stage-'));
    const folder = `svc-client-${version}-linux-${ARCH}`;
    fs.mkdirSync(path.join(stage, folder, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(stage, folder, 'bin', 'svcd'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(stage, folder, 'RELEASE'), `${marker}\n`);
    const name = clientArchiveName(version, ARCH);
    execFileSync('tar', ['-czf', path.join(published, name), '-C', stage, folder]);
    const sum = createHash('sha256')
      .update(fs.readFileSync(path.join(published, name)))
      .digest('hex');
    fs.appendFileSync(path.join(published, 'SHA256SUMS'), `${sum}  ${name}\n`);
  }

  function installed(version: string): void {
    fs.mkdirSync(path.join(root, 'releases', version, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, 'releases', version, 'RELEASE'), `${version}\n`);
  }

  beforeEach(() => {
    root = path.join(tmp, 'opt');
    published = path.join(tmp, 'published');
    fs.mkdirSync(published);
    for (const v of ['4.2.1', '4.2.2', '4.2.3']) installed(v);
    fs.symlinkSync('releases/4.2.3', path.join(root, 'current'));
  });

  const running = { kind: 'release', root: '', version: '4.2.3' } as const;
  const update = (version: string, env: NodeJS.ProcessEnv = { SVC_RELEASE_URL: published }) =>
    executeCommand(command({ version }), ctxFor({ ...running, root }, env));
  const current = () => fs.readlinkSync(path.join(root, 'current'));
  const releases = () => fs.readdirSync(path.join(root, 'releases')).sort();

  it('downloads, verifies, unpacks as releases/<version>, switches current, keeps the previous, prunes the rest', async () => {
    publish('4.2.4');
    const size = fs.statSync(path.join(published, clientArchiveName('4.2.4', ARCH))).size;
    const out = await update('v4.2.4');
    expect(out).toMatchObject({ ok: true, exitCode: 0, stderr: '', after: 'restart' });
    expect(out.stdout).toBe(
      `downloaded ${clientArchiveName('4.2.4', ARCH)} (${size} bytes, SHA-256 as SHA256SUMS says)\n` +
        'installed releases/4.2.4\ncurrent -> releases/4.2.4 (was releases/4.2.3)\n' +
        'removed releases/4.2.1\nremoved releases/4.2.2\nrestarting\n',
    );
    expect(current()).toBe('releases/4.2.4');
    expect(releases()).toEqual(['4.2.3', '4.2.4']);
    expect(fs.readFileSync(path.join(root, 'releases', '4.2.4', 'RELEASE'), 'utf8')).toBe('4.2.4\n');
    expect(fs.readdirSync(root).sort()).toEqual(['current', 'releases']);
  });

  it('the running version: already there, reload only; an installed one: switched without a download', async () => {
    expect(await update('v4.2.3', {})).toMatchObject({
      ok: true,
      stdout: 'already at 4.2.3; configuration reloaded\n',
      after: 'reload',
    });
    const back = await update('v4.2.2', {});
    expect(back).toMatchObject({ ok: true, after: 'restart' });
    expect(back.stdout).toBe(
      'releases/4.2.2 already installed\ncurrent -> releases/4.2.2 (was releases/4.2.3)\nremoved releases/4.2.1\nrestarting\n',
    );
    expect(current()).toBe('releases/4.2.2');
  });

  it('a tampered archive, a missing one, a wrong RELEASE, no SVC_RELEASE_URL: failed, current and releases unchanged', async () => {
    publish('4.2.4');
    publish('4.2.5', '4.2.6');
    fs.appendFileSync(path.join(published, clientArchiveName('4.2.4', ARCH)), 'x');
    const tampered = await update('v4.2.4');
    expect(tampered).toMatchObject({ ok: false, exitCode: 1, stdout: '' });
    expect(tampered.stderr).toMatch(
      new RegExp(
        `^update: checksum mismatch for ${clientArchiveName('4.2.4', ARCH)}: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; nothing installed\\n$`,
      ),
    );
    expect((await update('v4.2.9')).stderr).toBe(
      `update: ${path.join(published, 'SHA256SUMS')} lists no ${clientArchiveName('4.2.9', ARCH)}\n`,
    );
    expect((await update('v4.2.5')).stderr).toBe("update: the archive's RELEASE says 4.2.6, not 4.2.5\n");
    expect((await update('v4.2.4', {})).stderr).toMatch(/^update: SVC_RELEASE_URL is not set: /);
    expect(current()).toBe('releases/4.2.3');
    expect(releases()).toEqual(['4.2.1', '4.2.2', '4.2.3']);
  });

  it('a current that is not a symlink is refused before anything is fetched', async () => {
    fs.rmSync(path.join(root, 'current'));
    fs.mkdirSync(path.join(root, 'current'));
    expect((await update('v4.2.4')).stderr).toBe(
      `update: ${path.join(root, 'current')} is not a symlink: a release install runs releases/<version> through it\n`,
    );
  });
});
