import { Value } from '@sinclair/typebox/value';
import { Finding, isFingerprint } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../src/pipeline/compliance-map.ts';
import { normalizeFindings } from '../src/pipeline/findings.ts';
import { scanTimeOf } from '../src/scanner/parse/index.ts';
import {
  detectFindings,
  OPTIONAL_SCRIPTS,
  OWN_RULE_SCRIPTS,
  REQUIRED_SCRIPTS,
  RULE_FAMILIES,
} from '../src/scanner/rules/index.ts';
import { fixture, HAND, hostOf, REAL } from './scanner-fixtures.ts';

const at = new Date('2026-11-25T12:00:00Z');

describe('detectFindings', () => {
  const hand = fixture(HAND);
  const all = detectFindings(hand.hosts, { scanTime: scanTimeOf(hand.info) ?? at });

  it('finds every planted weakness on the weak host and nothing on the hardened or down hosts', () => {
    expect(new Set(all.map((f) => f.host))).toEqual(new Set(['10.99.0.5']));
    expect([...new Set(all.map((f) => f.rule_id?.replace(/:.*/, '')))].sort()).toEqual([
      'certificate-not-yet-valid',
      'certificate-weak-key',
      'database-empty-password',
      'database-exposed',
      'database-trust-authentication',
      'directory-listing',
      'ftp-anonymous',
      'ftp-cleartext',
      'http-missing-content-type-options',
      'http-missing-csp',
      'http-missing-frame-options',
      'http-missing-hsts',
      'http-no-tls',
      'memcached-unauthenticated',
      'outdated-software',
      'redis-unauthenticated',
      'rsh-open',
      'smb-signing-not-required',
      'smbv1-enabled',
      'snmp-default-community',
      'ssh-protocol-1',
      'ssh-weak-algorithms',
      'ssh-weak-host-key',
      'telnet-open',
      'tls-deprecated-protocol',
      'tls-weak-cipher',
      'tls-weak-dh-params',
    ]);
  });

  it('gives findings the protocol accepts, with a known category, evidence, advice and a CWE or CVE', () => {
    for (const f of [...all, ...detectFindings(fixture(REAL).hosts, { scanTime: at })]) {
      expect(Value.Check(Finding, f), f.rule_id).toBe(true);
      expect(CATEGORIES, f.rule_id).toContain(f.category);
      expect(f.evidence?.length, f.rule_id).toBeGreaterThan(10);
      expect(f.description?.length, f.rule_id).toBeGreaterThan(20);
      expect(f.remediation?.length, f.rule_id).toBeGreaterThan(10);
      expect((f.references?.cwe?.length ?? 0) + (f.references?.cve?.length ?? 0), f.rule_id).toBeGreaterThan(0);
      expect(f.fingerprint).toBeUndefined();
    }
  });

  it('leaves fingerprints to the pipeline normaliser, which makes them unique per rule, host and port', () => {
    const normalized = normalizeFindings(all);
    expect(normalized.every((f) => isFingerprint(f.fingerprint))).toBe(true);
    expect(new Set(normalized.map((f) => f.fingerprint)).size).toBe(all.length);
  });
});

describe('keyed on the service, never the port number', () => {
  const scanTime = at;
  const strip = (fs: ReturnType<typeof detectFindings>) => fs.map(({ port: _p, evidence: _e, ...rest }) => rest);

  it('finds the same weaknesses when every service moves to another port', () => {
    const moved = fixture(HAND);
    const weak = hostOf(moved, '10.99.0.5');
    const before = detectFindings([weak], { scanTime });
    for (const p of weak.ports) p.portid = 40000 + (p.portid % 1000);
    const after = detectFindings([weak], { scanTime });
    expect(strip(after)).toEqual(strip(before));
    expect(after.every((f) => f.port === undefined || f.port >= 40000)).toBe(true);
  });

  it('finds nothing on well-known port numbers whose service is something else', () => {
    const relabelled = fixture(HAND);
    const weak = hostOf(relabelled, '10.99.0.5');
    const numbers = [23, 513, 512, 21, 6379, 5432, 3306, 11211, 27017, 22, 443, 80, 445, 161];
    weak.ports = weak.ports.map((p, i) => ({
      ...p,
      portid: numbers[i % numbers.length] ?? 1,
      service: { name: 'unknown', cpes: [] },
      scripts: [],
    }));
    weak.hostscripts = [];
    expect(detectFindings([weak], { scanTime })).toEqual([]);
  });
});

describe('REQUIRED_SCRIPTS', () => {
  it('lists the scripts the rules read, all safe-to-run Debian NSE scripts that work offline', () => {
    expect(REQUIRED_SCRIPTS).toEqual([
      'ftp-anon',
      'http-headers',
      'http-ls',
      'http-security-headers',
      'http-title',
      'memcached-info',
      'mongodb-databases',
      'redis-info',
      'smb-protocols',
      'smb-security-mode',
      'smb2-security-mode',
      'snmp-sysdescr',
      'ssh2-enum-algos',
      'sshv1',
      'ssl-cert',
      'ssl-dh-params',
      'ssl-enum-ciphers',
      'sslv2',
      'telnet-encryption',
    ]);
    expect(OPTIONAL_SCRIPTS).toEqual(['mysql-empty-password', 'pgsql-brute', 'snmp-brute']);
    // The scanner's own (scanner/nse/): nmap's ssh-hostkey loses keys (docs/scanner/detection-rules.md).
    expect(OWN_RULE_SCRIPTS).toEqual(['svc-ssh-host-keys']);
    expect(RULE_FAMILIES.map((f) => f.id)).toEqual([
      'cleartext-remote-access',
      'ftp',
      'databases',
      'tls',
      'certificates',
      'http',
      'ssh',
      'snmp',
      'smb',
      'outdated-versions',
      'vuln-feed',
      'script-cves',
    ]);
  });
});
