import { describe, expect, it } from 'vitest';
import type { NmapService } from '../src/scanner/parse/types.ts';
import { outdatedVersions } from '../src/scanner/rules/outdated-versions.ts';
import { compareVersions, splitDebianVersion } from '../src/cve-match/compare.ts';
import { KNOWN_VULNERABLE, KNOWN_VULNERABLE_CHECKED } from '../src/cve-match/known-vulnerable.ts';
import { matchKnownVulnerable, observedVersion } from '../src/cve-match/match.ts';
import { brief, HAND, HARDENED, REAL, run, WEAK } from './scanner-fixtures.ts';

const sign = (n: number) => (n > 0 ? 1 : n < 0 ? -1 : 0);

describe('compareVersions (dpkg order)', () => {
  it.each([
    ['7.4', '8.8', -1],
    ['9.2p1', '9.8p1', -1],
    ['9.10p1', '9.8p1', 1],
    ['8.8', '8.8p1', -1],
    ['1.3.5', '1.3.5a', -1],
    ['7.0.15', '7.2.11', -1],
    ['2.4.49', '2.4.49', 0],
    ['2+deb12u10', '2+deb12u3', 1],
    ['1.0~rc1', '1.0', -1],
  ])('%s vs %s', (a, b, expected) => {
    expect(sign(compareVersions(a, b))).toBe(expected);
    expect(sign(compareVersions(b, a))).toBe(expected === 0 ? 0 : -expected);
  });

  it('splits Debian versions into epoch, upstream and revision', () => {
    expect(splitDebianVersion('1:9.2p1-2+deb12u3')).toEqual({ epoch: 1, upstream: '9.2p1', revision: '2+deb12u3' });
    expect(splitDebianVersion('5:7.0.15-1~deb12u6')).toEqual({ epoch: 5, upstream: '7.0.15', revision: '1~deb12u6' });
    expect(splitDebianVersion('2.3.4')).toEqual({ epoch: 0, upstream: '2.3.4', revision: '' });
  });
});

const svc = (s: Partial<NmapService>): NmapService => ({ name: 'ssh', cpes: [], ...s });

describe('matching the known-vulnerable table', () => {
  it('reads the upstream version and Debian revision from the banner, and refuses guesses', () => {
    expect(observedVersion(svc({ version: '9.2p1 Debian 2+deb12u10' }))).toEqual({
      upstream: '9.2p1',
      debianRevision: '2+deb12u10',
    });
    expect(observedVersion(svc({ cpes: ['cpe:/a:openbsd:openssh:7.4'] }))).toEqual({ upstream: '7.4' });
    expect(observedVersion(svc({ version: '9.6.0 or later' }))).toBeUndefined();
    expect(observedVersion(svc({ version: '3.X - 4.X' }))).toBeUndefined();
    expect(observedVersion(svc({ version: '5.5.5-10.11.19-MariaDB-0+deb12u1' }))).toBeUndefined();
  });

  it('lets a Debian revision at or past the fix clear the match, and keeps one before it', () => {
    const ids = (version: string) =>
      matchKnownVulnerable(svc({ product: 'OpenSSH', version, cpes: ['cpe:/a:openbsd:openssh:9.2p1'] })).map(
        (m) => m.entry.id,
      );
    expect(ids('9.2p1 Debian 2+deb12u10')).toEqual([]);
    expect(ids('9.2p1 Debian 2+deb12u3')).toEqual([]);
    expect(ids('9.2p1 Debian 2+deb12u2')).toEqual(['openssh-regresshion']);
    expect(ids('9.2p1 Debian 2+deb12u1')).toEqual(['openssh-regresshion', 'openssh-terrapin']);
    expect(ids('9.2p1')).toEqual(['openssh-regresshion', 'openssh-terrapin']);
    expect(ids('9.8p1')).toEqual([]);
  });

  it('matches by product name when nmap gave no CPE, and never another product', () => {
    expect(matchKnownVulnerable(svc({ product: 'vsftpd', version: '2.3.4' })).map((m) => m.entry.id)).toEqual([
      'vsftpd-234-backdoor',
    ]);
    expect(matchKnownVulnerable(svc({ product: 'Dropbear sshd', version: '7.4' }))).toEqual([]);
  });

  it('keeps the table small, dated and sourced', () => {
    expect(KNOWN_VULNERABLE_CHECKED).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(KNOWN_VULNERABLE.length).toBeGreaterThanOrEqual(10);
    expect(KNOWN_VULNERABLE.length).toBeLessThanOrEqual(15);
    for (const e of KNOWN_VULNERABLE) {
      expect(e.checked <= KNOWN_VULNERABLE_CHECKED, e.id).toBe(true);
      expect(e.source.length, e.id).toBeGreaterThan(0);
      expect(
        e.cve.every((c) => /^CVE-\d{4}-\d{4,}$/.test(c)),
        e.id,
      ).toBe(true);
      for (const r of e.affected)
        if (r.from !== undefined) expect(compareVersions(r.from, r.below), e.id).toBeLessThan(0);
    }
    expect(new Set(KNOWN_VULNERABLE.map((e) => e.id)).size).toBe(KNOWN_VULNERABLE.length);
  });
});

describe('outdated service versions rule', () => {
  it('finds the old OpenSSH announced by the real banner server, marked potential, with CVEs', () => {
    const found = run(outdatedVersions, REAL, '127.0.0.1');
    expect(found.map((f) => [f.rule_id, f.severity, f.port, f.references?.cve])).toEqual([
      ['outdated-software:openssh-terrapin', 'medium', 2222, ['CVE-2023-48795']],
      ['outdated-software:openssh-supplemental-groups', 'high', 2222, ['CVE-2021-41617']],
      ['outdated-software:openssh-user-enumeration', 'medium', 2222, ['CVE-2018-15473']],
    ]);
    expect(found[0]?.evidence).toBe(
      'tcp/2222 ssh (OpenSSH 7.4 protocol 2.0) [probed, conf 10]; version 7.4 is in the affected range; potential: ' +
        `matched on the reported version only (known-vulnerable table of ${KNOWN_VULNERABLE_CHECKED}), a distribution ` +
        'may have backported the fix',
    );
    expect(found[0]).toMatchObject({ category: 'vulnerable_software', cvss: 5.9 });
  });

  it('names the Debian fix when the banner shows an older revision', () => {
    const found = run(outdatedVersions, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      {
        rule_id: 'outdated-software:vsftpd-234-backdoor',
        severity: 'critical',
        category: 'vulnerable_software',
        port: 2122,
        service: 'ftp',
      },
      {
        rule_id: 'outdated-software:redis-lua-use-after-free',
        severity: 'critical',
        category: 'vulnerable_software',
        port: 16379,
        service: 'redis',
      },
      {
        rule_id: 'outdated-software:openssh-regresshion',
        severity: 'high',
        category: 'vulnerable_software',
        port: 2200,
        service: 'ssh',
      },
      {
        rule_id: 'outdated-software:openssh-terrapin',
        severity: 'medium',
        category: 'vulnerable_software',
        port: 2200,
        service: 'ssh',
      },
      {
        rule_id: 'outdated-software:nginx-resolver-off-by-one',
        severity: 'high',
        category: 'vulnerable_software',
        port: 8081,
        service: 'http',
      },
      {
        rule_id: 'outdated-software:samba-is-known-pipename',
        severity: 'critical',
        category: 'vulnerable_software',
        port: 4445,
        service: 'microsoft-ds',
      },
    ]);
    expect(found[2]?.evidence).toBe(
      'tcp/2200 ssh (OpenSSH 9.2p1 Debian 2+deb12u1 protocol 2.0) [probed, conf 10]; version 9.2p1 Debian ' +
        '2+deb12u1 predates the Debian fix 1:9.2p1-2+deb12u3',
    );
    expect(run(outdatedVersions, HAND, HARDENED)).toEqual([]);
  });
});
