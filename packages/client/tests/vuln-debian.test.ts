import { describe, expect, it } from 'vitest';
import { type DebianPackageSpec, vulnIndex } from '@svc/test-support/vuln-index';
import type { NmapHost, NmapService } from '../src/scanner/parse/types.ts';
import { vulnFeed } from '../src/scanner/rules/vuln-feed.ts';
import { debianAtLeast } from '../src/cve-match/compare.ts';
import { debianPackageOf } from '../src/cve-match/debian-packages.ts';
import { debianReleaseOf } from '../src/cve-match/debian.ts';
import { matchVulnIndex, vulnLookup } from '../src/cve-match/vuln-index-match.ts';

/**
 * Distribution backports (docs/vuln-matching.md, "Distribution packages"): a banner naming a
 * Debian revision is judged by the Debian security tracker's fixed versions the index carries.
 */

const OPENSSH = 'a:openbsd:openssh';
const REPOSITORIES = {
  bullseye: ['1:8.4p1-5+deb11u3', '1:8.4p1-5+deb11u5'],
  bookworm: ['1:9.2p1-2+deb12u5', '1:9.2p1-2+deb12u6'],
  trixie: ['1:10.0p1-7'],
  sid: ['1:10.0p1-7'],
};
const TRACKER: Record<string, DebianPackageSpec> = {
  openssh: {
    releases: REPOSITORIES,
    cves: {
      'CVE-2007-2768': { bullseye: null, bookworm: null, trixie: null, sid: null },
      'CVE-2023-38408': {
        bullseye: '1:8.4p1-5+deb11u2',
        bookworm: '1:9.2p1-2+deb12u1',
        trixie: '1:9.3p2-1',
        sid: '1:9.3p2-1',
      },
      'CVE-2024-6387': { bullseye: '0', bookworm: '1:9.2p1-2+deb12u3', trixie: '1:9.7p1-7', sid: '1:9.7p1-7' },
      'CVE-2025-26465': { bullseye: null, bookworm: '1:9.2p1-2+deb12u5', trixie: '1:9.9p2-1', sid: '1:9.9p2-1' },
    },
    unimportant: { 'CVE-2007-2768': ['bullseye', 'bookworm', 'trixie', 'sid'] },
  },
};
const INDEX = vulnIndex(
  [
    { id: 'CVE-2007-2768', cvss: 3.7, affects: { [OPENSSH]: [{}] } },
    { id: 'CVE-2023-38408', cvss: 9.8, affects: { [OPENSSH]: [{ end_excluding: '9.3' }, { version: '9.3p1' }] } },
    { id: 'CVE-2024-6387', cvss: 8.1, affects: { [OPENSSH]: [{ start_including: '8.5p1', end_excluding: '9.8p1' }] } },
    // No NVD range (awaiting analysis): only the tracker names it.
    { id: 'CVE-2025-26465', cvss: 6.8 },
    { id: 'CVE-2099-0002', cvss: 5, affects: { [OPENSSH]: [{ end_excluding: '9.9p1' }] } },
  ],
  { debian: TRACKER },
);

const svc = (version: string): NmapService => ({
  name: 'ssh',
  product: 'OpenSSH',
  version,
  cpes: [`cpe:/a:openbsd:openssh:${version.split(' ')[0]}`],
});
const matched = (version: string, index = INDEX) =>
  matchVulnIndex(svc(version), vulnLookup(index)).map((m) => [
    m.cve.id,
    m.basis.kind === 'distribution_package' ? `confirmed ${m.basis.release} ${m.basis.fixed ?? 'open'}` : 'potential',
  ]);

describe('the Debian release of a package revision', () => {
  const pkg = { releases: REPOSITORIES, cves: [] };
  it.each([
    ['9.2p1', '2+deb12u3', { releases: ['bookworm'], by: 'suffix' }],
    ['7.0.15', '1~deb12u6', { releases: ['bookworm'], by: 'suffix' }],
    ['8.4p1', '5+deb11u1', { releases: ['bullseye'], by: 'suffix' }],
    ['9.2p1', '2', { releases: ['bookworm'], by: 'repository' }],
    ['10.0p1', '7', { releases: ['sid', 'trixie'], by: 'repository' }],
    ['7.4p1', '10+deb9u7', { releases: ['stretch'], by: 'suffix' }],
  ])('%s-%s is of %j', (upstream, revision, release) => {
    expect(debianReleaseOf({ upstream, revision }, pkg)).toEqual(release);
  });

  it('names why when it cannot tell', () => {
    expect(debianReleaseOf({ upstream: '9.6p1', revision: '1~bpo12+1' }, pkg)).toEqual({
      releases: [],
      why: '1~bpo12+1 is a backport, which the Debian security tracker does not follow',
    });
    expect(debianReleaseOf({ upstream: '9.6p1', revision: '1' }, pkg)).toEqual({
      releases: [],
      why: "no Debian release's repositories hold upstream version 9.6p1",
    });
    expect(debianReleaseOf({ upstream: '9.2p1', revision: '2+deb99u1' }, pkg)).toEqual({
      releases: [],
      why: 'Debian 99 is a release this svc does not know',
    });
  });
});

describe('a package version against a fixed version, in dpkg order', () => {
  it.each([
    ['9.2p1', '2+deb12u3', '1:9.2p1-2+deb12u1', true],
    ['9.2p1', '2+deb12u1', '1:9.2p1-2+deb12u1', true],
    ['9.2p1', '2', '1:9.2p1-2+deb12u1', false],
    ['9.2p1', '2+deb12u10', '1:9.2p1-2+deb12u3', true],
    ['9.2p1', '2+deb12u2', '1:9.2p1-2+deb12u3', false],
    ['8.4p1', '5+deb11u3', '0', true],
    ['9.3p2', '1', '1:9.2p1-2+deb12u1', true],
    ['1.0a', '1', '1.0-1', true],
  ])('%s-%s at or past %s: %s', (upstream, revision, fixed, expected) => {
    expect(debianAtLeast(upstream, revision, fixed)).toBe(expected);
  });
});

describe('matching a Debian package revision', () => {
  it('leaves out what the revision fixed and confirms what it did not', () => {
    // deb12u3: 38408 (u1) and regreSSHion (u3) fixed; 26465 fixed only in u5: confirmed without an
    // NVD range; 2768 open (no fix planned: unimportant) and in NVD's range: confirmed as well.
    expect(matched('9.2p1 Debian 2+deb12u3')).toEqual([
      ['CVE-2007-2768', 'confirmed bookworm open'],
      ['CVE-2025-26465', 'confirmed bookworm 1:9.2p1-2+deb12u5'],
      ['CVE-2099-0002', 'potential'],
    ]);
    expect(matched('9.2p1 Debian 2')).toEqual([
      ['CVE-2007-2768', 'confirmed bookworm open'],
      ['CVE-2023-38408', 'confirmed bookworm 1:9.2p1-2+deb12u1'],
      ['CVE-2024-6387', 'confirmed bookworm 1:9.2p1-2+deb12u3'],
      ['CVE-2025-26465', 'confirmed bookworm 1:9.2p1-2+deb12u5'],
      ['CVE-2099-0002', 'potential'],
    ]);
    expect(matched('9.2p1 Debian 2+deb12u6')).toEqual([
      ['CVE-2007-2768', 'confirmed bookworm open'],
      ['CVE-2099-0002', 'potential'],
    ]);
  });

  it('a CVE open in the release is confirmed with no fixed version; one rated unimportant only when NVD names it too', () => {
    // bullseye: 26465 open; 6387 never affected ("0").
    expect(matched('8.4p1 Debian 5+deb11u3')).toEqual([
      ['CVE-2007-2768', 'confirmed bullseye open'],
      ['CVE-2025-26465', 'confirmed bullseye open'],
      ['CVE-2099-0002', 'potential'],
    ]);
    // Without an NVD range, an unimportant open CVE is not reported from the tracker alone.
    const unranged = vulnIndex([{ id: 'CVE-2007-2768', cvss: 3.7 }], {
      debian: {
        openssh: {
          releases: REPOSITORIES,
          cves: { 'CVE-2007-2768': { bullseye: null } },
          unimportant: { 'CVE-2007-2768': ['bullseye'] },
        },
      },
    });
    expect(matched('8.4p1 Debian 5+deb11u3', unranged)).toEqual([]);
  });

  it('without a Debian revision, or without the tracker, every range match is potential', () => {
    expect(matched('9.2p1')).toEqual([
      ['CVE-2007-2768', 'potential'],
      ['CVE-2023-38408', 'potential'],
      ['CVE-2024-6387', 'potential'],
      ['CVE-2099-0002', 'potential'],
    ]);
    const noTracker = vulnIndex([
      { id: 'CVE-2023-38408', cvss: 9.8, affects: { [OPENSSH]: [{ end_excluding: '9.3' }] } },
    ]);
    const [only] = matchVulnIndex(svc('9.2p1 Debian 2+deb12u3'), vulnLookup(noTracker));
    expect(only?.basis).toEqual({
      kind: 'version_range',
      debianNote: 'no Debian security tracker data was imported into the portal',
    });
    // An index written without the section at all reads the same.
    const { debian: _none, ...withoutSection } = noTracker;
    const [same] = matchVulnIndex(svc('9.2p1 Debian 2+deb12u3'), vulnLookup(withoutSection as typeof noTracker));
    expect(same?.basis).toEqual(only?.basis);
  });

  it('says in the finding how it was matched', () => {
    const host: NmapHost = {
      status: { state: 'up' },
      addresses: [{ addr: '10.0.0.9', addrtype: 'ipv4' }],
      hostnames: [],
      ports: [{ protocol: 'tcp', portid: 22, state: 'open', service: svc('9.2p1 Debian 2'), scripts: [] }],
      os: [],
      hostscripts: [],
    };
    const found = vulnFeed.evaluate(host, { scanTime: new Date('2026-11-27T10:00:00Z'), vulnIndex: INDEX });
    // The hand table reports regreSSHion (CVE-2024-6387) on this service itself: the index leaves it.
    expect(found.map((f) => f.rule_id)).toEqual([
      'cve:CVE-2007-2768',
      'cve:CVE-2023-38408',
      'cve:CVE-2025-26465',
      'cve:CVE-2099-0002',
    ]);
    expect(found.find((f) => f.rule_id === 'cve:CVE-2023-38408')).toMatchObject({
      title: 'OpenSSH 9.2p1 (Debian 2): CVE-2023-38408',
      severity: 'critical',
      evidence:
        "tcp/22 ssh (OpenSSH 9.2p1 Debian 2); confirmed: Debian bookworm's openssh fixed CVE-2023-38408 in " +
        '1:9.2p1-2+deb12u1; this package is 9.2p1-2, before the fix (the Debian security tracker as imported ' +
        '2026-11-26); version 9.2p1 is also in an NVD range of CVE-2023-38408',
      remediation:
        "Upgrade Debian's openssh packages to 1:9.2p1-2+deb12u1 or later (apt-get update && apt-get upgrade from bookworm-security).",
      references: {
        cve: ['CVE-2023-38408'],
        urls: [
          'https://nvd.nist.gov/vuln/detail/CVE-2023-38408',
          'https://security-tracker.debian.org/tracker/CVE-2023-38408',
        ],
      },
      match: {
        kind: 'distribution_package',
        confidence: 'confirmed',
        source: 'Debian security tracker',
        distribution: {
          name: 'debian',
          release: 'bookworm',
          package: 'openssh',
          version: '9.2p1-2',
          fixed_version: '1:9.2p1-2+deb12u1',
        },
      },
    });
    expect(found.find((f) => f.rule_id === 'cve:CVE-2007-2768')?.evidence).toMatch(
      /confirmed: Debian bookworm's openssh has no fix for CVE-2007-2768 yet \(open in the Debian security tracker as imported 2026-11-26\), rated unimportant by Debian; this package is 9\.2p1-2; version 9\.2p1 is also in an NVD range of CVE-2007-2768$/,
    );
    expect(found.find((f) => f.rule_id === 'cve:CVE-2099-0002')).toMatchObject({
      title: 'OpenSSH 9.2p1: CVE-2099-0002 (potential)',
      match: { kind: 'version_range', confidence: 'potential', source: 'NVD' },
    });
    expect(found.find((f) => f.rule_id === 'cve:CVE-2099-0002')?.evidence).toMatch(
      /; the Debian revision could not decide: the Debian security tracker gives no verdict on it for openssh in bookworm$/,
    );
  });

  it('looks the package up under the source package Debian names it by', () => {
    expect(debianPackageOf('a:openbsd:openssh')).toBe('openssh');
    expect(debianPackageOf('a:apache:http_server')).toBe('apache2');
    expect(debianPackageOf('a:isc:bind')).toBe('bind9');
    expect(debianPackageOf('a:redislabs:redis')).toBe('redis');
    expect(debianPackageOf('a:vendor:Not_A_Package!')).toBeNull();
  });
});
