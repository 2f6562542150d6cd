import { describe, expect, it } from 'vitest';
import { certificates } from '../src/scanner/rules/certificates.ts';
import { ssh } from '../src/scanner/rules/ssh.ts';
import { tls } from '../src/scanner/rules/tls.ts';
import { fixture, hostOf, REAL, brief, HAND, run, WEAK } from './scanner-fixtures.ts';

describe('TLS protocols and ciphers (real openssl s_server, odd ports, unnamed services)', () => {
  it('flags TLS 1.0/1.1 and 1024-bit key exchange that nmap grades A', () => {
    const found = run(tls, REAL, '127.0.0.1');
    expect(found.map(brief)).toEqual([
      { rule_id: 'tls-deprecated-protocol', severity: 'medium', category: 'weak_crypto', port: 4433, service: 'vop' },
      { rule_id: 'tls-weak-key-exchange', severity: 'medium', category: 'weak_crypto', port: 4433, service: 'vop' },
      {
        rule_id: 'tls-deprecated-protocol',
        severity: 'medium',
        category: 'weak_crypto',
        port: 4434,
        service: 'unknown',
      },
      { rule_id: 'tls-weak-key-exchange', severity: 'medium', category: 'weak_crypto', port: 4434, service: 'unknown' },
    ]);
    expect(found[0]?.title).toBe('Deprecated TLS/SSL protocol versions enabled (TLSv1.0)');
    expect(found[2]?.title).toBe('Deprecated TLS/SSL protocol versions enabled (TLSv1.0, TLSv1.1)');
    expect(found[1]?.title).toBe('TLS key exchange under 2048 bits (dh 1024, rsa 1024)');
    expect(found[1]?.evidence).toContain('TLSv1.0 TLS_RSA_WITH_AES_128_CBC_SHA (rsa 1024)');
    expect(found[1]?.references?.cve).toEqual(['CVE-2015-4000']);
  });

  it('rates SSLv3 high and reads cipher warnings, weak grades and ssl-dh-params', () => {
    const found = run(tls, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      { rule_id: 'tls-deprecated-protocol', severity: 'high', category: 'weak_crypto', port: 9443, service: 'https' },
      { rule_id: 'tls-weak-cipher', severity: 'medium', category: 'weak_crypto', port: 9443, service: 'https' },
      { rule_id: 'tls-weak-dh-params', severity: 'medium', category: 'weak_crypto', port: 9443, service: 'https' },
    ]);
    expect(found[0]?.references?.cve).toEqual(['CVE-2014-3566']);
    expect(found[1]?.evidence).toBe(
      'ssl-enum-ciphers: 64-bit block cipher 3DES vulnerable to SWEET32 attack; Broken cipher RC4 is deprecated by ' +
        'RFC 7465; TLS_RSA_WITH_3DES_EDE_CBC_SHA (C); TLS_RSA_WITH_RC4_128_SHA (C); least strength C',
    );
    expect(found[2]?.evidence).toBe('ssl-dh-params: Diffie-Hellman Key Exchange Insufficient Group Strength');
  });
});

describe('certificates', () => {
  it('finds the real expired, self-signed RSA-1024 certificate on both TLS ports', () => {
    const found = run(certificates, REAL, '127.0.0.1');
    expect(found.map((f) => [f.rule_id, f.port, f.severity])).toEqual([
      ['certificate-expired', 4433, 'medium'],
      ['self-signed-certificate', 4433, 'medium'],
      ['certificate-weak-key', 4433, 'medium'],
      ['certificate-expired', 4434, 'medium'],
      ['self-signed-certificate', 4434, 'medium'],
      ['certificate-weak-key', 4434, 'medium'],
    ]);
    expect(found[0]?.evidence).toMatch(
      /^ssl-cert: subject commonName=expired\.test; issuer commonName=expired\.test; valid 2020-01-01T00:00:00 to 2021-01-01T00:00:00; scanned 2026-/,
    );
    expect(found[2]?.title).toBe('Weak certificate key (RSA 1024 bits)');
  });

  it('judges validity against the scan time passed in, never the clock', () => {
    const host = hostOf(fixture(REAL), '127.0.0.1');
    const during = certificates.evaluate(host, { scanTime: new Date('2020-06-01T00:00:00Z') });
    expect(during.map((f) => f.rule_id)).not.toContain('certificate-expired');
    const before = certificates.evaluate(host, { scanTime: new Date('2019-12-31T23:59:59Z') });
    expect(before.filter((f) => f.port === 4433).map((f) => f.rule_id)).toEqual([
      'certificate-not-yet-valid',
      'self-signed-certificate',
      'certificate-weak-key',
    ]);
    // notAfter is read as UTC: one second past it is expired.
    const justAfter = certificates.evaluate(host, { scanTime: new Date('2021-01-01T00:00:01Z') });
    expect(justAfter.map((f) => f.rule_id)).toContain('certificate-expired');
  });

  it('flags a CA-issued certificate that is not yet valid and signed with SHA-1, but not as self-signed', () => {
    const found = run(certificates, HAND, WEAK);
    expect(found.map((f) => [f.rule_id, f.port])).toEqual([
      ['certificate-not-yet-valid', 9443],
      ['certificate-weak-key', 9443],
    ]);
    expect(found[1]?.title).toBe('Weak certificate signature (sha1WithRSAEncryption)');
  });
});

describe('SSH', () => {
  it('lists the weak algorithms, the short host key and protocol 1', () => {
    const found = run(ssh, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      { rule_id: 'ssh-weak-algorithms', severity: 'medium', category: 'weak_crypto', port: 2200, service: 'ssh' },
      { rule_id: 'ssh-weak-host-key', severity: 'medium', category: 'weak_crypto', port: 2200, service: 'ssh' },
      { rule_id: 'ssh-protocol-1', severity: 'high', category: 'weak_crypto', port: 2200, service: 'ssh' },
    ]);
    expect(found[0]?.evidence).toBe(
      'ssh2-enum-algos: kex_algorithms: diffie-hellman-group14-sha1, diffie-hellman-group1-sha1; ' +
        'server_host_key_algorithms: ssh-rsa; encryption_algorithms: aes256-cbc, arcfour; mac_algorithms: hmac-md5-96',
    );
    expect(found[1]?.evidence).toBe('ssh-hostkey: ssh-rsa 1024 bits');
    expect(found[2]?.evidence).toContain('sshv1: Server supports SSHv1');
  });

  it("measures host keys with the scanner's own script, which sees the RSA key of a current OpenSSH that nmap's ssh-hostkey misses", () => {
    const file = 'real-lab-ssh-host-keys.xml';
    const keysOf = (ip: string, id: string) =>
      hostOf(fixture(file), ip)
        .ports[0]?.scripts.find((s) => s.id === id)
        ?.output.match(/\d+ \S+ \([\w-]+\)$/gm);
    // OpenSSH 9.2's defaults offer RSA keys as rsa-sha2-512/256 only: ssh-hostkey (asking for ssh-rsa) never sees them.
    expect(keysOf('10.231.0.20', 'ssh-hostkey')).toEqual([expect.stringMatching(/^256 \w+ \(ED25519\)$/)]);
    expect(keysOf('10.231.0.20', 'svc-ssh-host-keys')).toEqual([
      expect.stringMatching(/^3072 SHA256:\S+ \(ssh-rsa\)$/),
      expect.stringMatching(/^256 SHA256:\S+ \(ssh-ed25519\)$/),
    ]);
    expect(run(ssh, file, '10.231.0.20').map((f) => f.rule_id)).toEqual([]);
    const weak = run(ssh, file, '10.231.0.13').filter((f) => f.rule_id === 'ssh-weak-host-key');
    expect(weak.map((f) => [f.port, f.evidence])).toEqual([[22, 'svc-ssh-host-keys: ssh-rsa 1024 bits']]);
  });

  it('says nothing when ssh2-enum-algos did not run (the real banner-only server): not observed', () => {
    expect(run(ssh, REAL, '127.0.0.1')).toEqual([]);
  });
});
