import { describe, expect, it } from 'vitest';
import { cleartextRemote } from '../src/scanner/rules/cleartext-remote.ts';
import { databases } from '../src/scanner/rules/databases.ts';
import { ftp } from '../src/scanner/rules/ftp.ts';
import { smb } from '../src/scanner/rules/smb.ts';
import { snmp } from '../src/scanner/rules/snmp.ts';
import { brief, fixture, HAND, hostOf, REAL, run, WEAK } from './scanner-fixtures.ts';

describe('cleartext remote access', () => {
  it('finds telnet and the r-services by service name, with the service line as evidence', () => {
    const found = run(cleartextRemote, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      { rule_id: 'telnet-open', severity: 'high', category: 'cleartext_protocol', port: 2323, service: 'telnet' },
      { rule_id: 'rsh-open', severity: 'high', category: 'cleartext_protocol', port: 5140, service: 'login' },
      { rule_id: 'rsh-open', severity: 'high', category: 'cleartext_protocol', port: 5120, service: 'exec' },
    ]);
    expect(found[0]).toMatchObject({
      host: '10.99.0.5',
      hostname: 'weak.lab.test',
      protocol: 'tcp',
      evidence:
        'tcp/2323 telnet (Linux telnetd) [probed, conf 10]; telnet-encryption: Telnet server supports encryption',
      references: { cwe: ['CWE-319'] },
    });
    expect(found[2]?.description).toContain('from the port number only (lower confidence)');
    // The closed telnet port 2300 gives nothing.
    expect(found.some((f) => f.port === 2300)).toBe(false);
  });
});

describe('FTP', () => {
  it('rates anonymous login high when writable, medium otherwise, and flags FTP that offered no TLS', () => {
    const found = run(ftp, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      { rule_id: 'ftp-anonymous', severity: 'high', category: 'default_credentials', port: 2121, service: 'ftp' },
      { rule_id: 'ftp-cleartext', severity: 'medium', category: 'cleartext_protocol', port: 2121, service: 'ftp' },
      { rule_id: 'ftp-anonymous', severity: 'medium', category: 'default_credentials', port: 2122, service: 'ftp' },
    ]);
    expect(found[0]?.title).toBe('Anonymous FTP login with a writable directory');
    expect(found[0]?.evidence).toContain('incoming [NSE: writeable]');
    expect(found[0]?.evidence?.startsWith('ftp-anon: Anonymous FTP login allowed (FTP code 230) | drwxrwxrwx')).toBe(
      true,
    );
    expect(found[1]?.evidence).toBe(
      'tcp/2121 ftp (vsftpd 3.0.3) [probed, conf 10]; no TLS certificate observed (ssl-cert gave no output)',
    );
  });
});

describe('databases', () => {
  it('reports every exposed engine and each one that answered without credentials', () => {
    const found = run(databases, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      { rule_id: 'database-exposed', severity: 'medium', category: 'exposed_service', port: 16379, service: 'redis' },
      {
        rule_id: 'redis-unauthenticated',
        severity: 'high',
        category: 'default_credentials',
        port: 16379,
        service: 'redis',
      },
      {
        rule_id: 'database-exposed',
        severity: 'medium',
        category: 'exposed_service',
        port: 15432,
        service: 'postgresql',
      },
      {
        rule_id: 'database-trust-authentication',
        severity: 'high',
        category: 'default_credentials',
        port: 15432,
        service: 'postgresql',
      },
      { rule_id: 'database-exposed', severity: 'medium', category: 'exposed_service', port: 13306, service: 'mysql' },
      {
        rule_id: 'database-empty-password',
        severity: 'critical',
        category: 'default_credentials',
        port: 13306,
        service: 'mysql',
      },
      {
        rule_id: 'database-exposed',
        severity: 'medium',
        category: 'exposed_service',
        port: 21211,
        service: 'memcached',
      },
      {
        rule_id: 'memcached-unauthenticated',
        severity: 'high',
        category: 'default_credentials',
        port: 21211,
        service: 'memcached',
      },
      { rule_id: 'database-exposed', severity: 'medium', category: 'exposed_service', port: 27018, service: 'mongodb' },
    ]);
    expect(found[1]?.evidence).toBe(
      'redis-info: Version: 7.0.15 | Operating System: Linux 6.1.0-27-amd64 x86_64 | Architecture: 64 bits | ' +
        'Role: master | Bind addresses: | 0.0.0.0',
    );
    expect(found[3]?.evidence).toBe('pgsql-brute: postgres => Trusted authentication');
    expect(found[5]?.evidence).toBe('mysql-empty-password: root account has empty password');
    // UDP enabled raises memcached to high (amplification).
    expect(found[7]?.description).toContain('UDP port is enabled');
    // MongoDB stayed silent: exposed, authentication not observed (never "secure").
    expect(found[8]?.description).toContain('was not observed');
  });

  it('reports a Redis whose redis-info stayed silent (password set) as exposed only, never as unauthenticated', () => {
    const parsed = fixture(HAND);
    const host = hostOf(parsed, WEAK);
    const redis = host.ports.find((p) => p.portid === 16379);
    if (redis === undefined) throw new Error('fixture lost its Redis port');
    redis.scripts = [];
    const found = databases.evaluate({ ...host, ports: [redis] }, { scanTime: new Date('2026-11-25T00:00:00Z') });
    expect(found.map((f) => f.rule_id)).toEqual(['database-exposed']);
  });
});

describe('SNMP', () => {
  it('proves the public community from -sV extrainfo and snmp-sysdescr output', () => {
    const found = run(snmp, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      {
        rule_id: 'snmp-default-community',
        severity: 'medium',
        category: 'default_credentials',
        port: 1661,
        service: 'snmp',
      },
    ]);
    expect(found[0]?.protocol).toBe('udp');
    expect(found[0]?.evidence).toContain('udp/1661 snmp (SNMPv1 server; net-snmp SNMPv3 server public)');
    expect(found[0]?.evidence).toContain('snmp-sysdescr: Linux weak 6.1.0-27-amd64');
    expect(found[0]?.references?.cve).toEqual(['CVE-1999-0517']);
  });
});

describe('SMB', () => {
  it('reads the host scripts for signing and SMBv1 and files them on the SMB port', () => {
    const found = run(smb, HAND, WEAK);
    expect(found.map(brief)).toEqual([
      {
        rule_id: 'smb-signing-not-required',
        severity: 'medium',
        category: 'misconfiguration',
        port: 4445,
        service: 'microsoft-ds',
      },
      {
        rule_id: 'smbv1-enabled',
        severity: 'medium',
        category: 'vulnerable_software',
        port: 4445,
        service: 'microsoft-ds',
      },
    ]);
    expect(found[0]?.evidence).toBe(
      'smb2-security-mode: 311: | Message signing enabled but not required; smb-security-mode: message_signing disabled',
    );
    expect(found[1]?.evidence).toBe(
      'smb-protocols: dialects NT LM 0.12 (SMBv1) [dangerous, but default], 202, 210, 300, 302, 311',
    );
  });

  it('finds nothing on the real lab, which runs no such services', () => {
    for (const family of [cleartextRemote, ftp, databases, snmp, smb])
      expect(run(family, REAL, '127.0.0.1')).toEqual([]);
  });
});
