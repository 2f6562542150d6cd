import { describe, expect, it } from 'vitest';
import {
  coverageBlock,
  coverageOf,
  coversPlace,
  formatPortList,
  inferredCoverage,
  parsePortList,
  portRangesOf,
  sessionCoverage,
} from '../src/index.ts';

describe('port lists', () => {
  it('parses numbers and ranges, sorted and merged, and writes them back', () => {
    expect(parsePortList('443,21-23,80,24')).toEqual([
      [21, 24],
      [80, 80],
      [443, 443],
    ]);
    expect(formatPortList(parsePortList('443,21-23,80,24')!)).toBe('21-24,80,443');
    expect(parsePortList('')).toEqual([]);
    expect(formatPortList(portRangesOf([3, 1, 2, 1, 9]))).toBe('1-3,9');
  });

  it('refuses what is not a port list', () => {
    for (const bad of ['a', '22,', '-1', '1-70000', '90-80', 'T:22', '22;23'])
      expect(parsePortList(bad), bad).toBeNull();
  });
});

describe('coverage', () => {
  const doc = {
    coverage: { hosts: ['10.0.0.1', 'Web.Example'], ports: { tcp: '1-1024', udp: '161' }, profile: 'quick_recon' },
  };

  it('a finding is covered when its host answered and its port was scanned over its transport', () => {
    const c = coverageOf(doc)!;
    expect(coversPlace(c, { host: '10.0.0.1', port: 22, protocol: 'tcp' })).toBe(true);
    expect(coversPlace(c, { host: '10.0.0.1', port: 22, protocol: null })).toBe(true); // tcp when unsaid
    expect(coversPlace(c, { host: 'web.example', port: 443, protocol: 'TCP' })).toBe(true);
    expect(coversPlace(c, { host: '10.0.0.1', port: 161, protocol: 'udp' })).toBe(true);
    // Another port, another transport, another host, no host: not looked at.
    expect(coversPlace(c, { host: '10.0.0.1', port: 8080, protocol: 'tcp' })).toBe(false);
    expect(coversPlace(c, { host: '10.0.0.1', port: 53, protocol: 'udp' })).toBe(false);
    expect(coversPlace(c, { host: '10.0.0.1', port: 22, protocol: 'sctp' })).toBe(false);
    expect(coversPlace(c, { host: '10.0.0.2', port: 22, protocol: 'tcp' })).toBe(false);
    expect(coversPlace(c, { host: null, port: 22, protocol: 'tcp' })).toBe(false);
    // A host-level finding: the host answered.
    expect(coversPlace(c, { host: '10.0.0.1', port: null, protocol: null })).toBe(true);
  });

  it('a file without a block covers the hosts it names, every port; a malformed block is no block', () => {
    const old = { findings: [{ host: '10.0.0.5', port: 22 }], topology: { nodes: [{ ip: '10.0.0.6' }] } };
    expect(coverageOf(old)).toBeNull();
    const c = sessionCoverage(old);
    expect(c.inferred).toBe(true);
    expect(coversPlace(c, { host: '10.0.0.6', port: 3389, protocol: 'tcp' })).toBe(true);
    expect(coversPlace(c, { host: '10.0.0.7', port: 22, protocol: 'tcp' })).toBe(false);
    expect(coverageOf({ coverage: { hosts: ['a'], ports: { tcp: 'all' } } })).toBeNull();
    expect(inferredCoverage({}).hosts.size).toBe(0);
  });

  it('writes a block with sorted unique hosts and only the transports scanned', () => {
    expect(
      coverageBlock({
        hosts: ['10.0.0.2', '10.0.0.1', '10.0.0.2'],
        ports: { tcp: parsePortList('80,22')!, udp: [] },
        profile: 'full_recon',
        tools: ['nmap'],
        source: 'svc-scan',
      }),
    ).toEqual({
      hosts: ['10.0.0.1', '10.0.0.2'],
      ports: { tcp: '22,80' },
      profile: 'full_recon',
      tools: ['nmap'],
      source: 'svc-scan',
    });
  });
});

describe('checks not made', () => {
  const doc = {
    coverage: {
      hosts: ['10.0.0.1', '10.0.0.2'],
      ports: { tcp: '1-1024' },
      not_checked: [
        { host: '10.0.0.1', port: 22, protocol: 'tcp', rules: ['ssh-weak-host-key'], reason: 'ssh-dss: no key' },
        { host: '10.0.0.2', rules: ['tls-weak-cipher'] },
      ],
    },
  };
  const at = (host: string, port: number | null) => ({ host, port, protocol: 'tcp' });

  it('keep open the findings of the rule named at the place, and only those', () => {
    const c = coverageOf(doc)!;
    expect(coversPlace(c, at('10.0.0.1', 22), 'ssh-weak-host-key')).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 22), 'ssh-weak-algorithms')).toBe(true);
    expect(coversPlace(c, at('10.0.0.1', 23), 'ssh-weak-host-key')).toBe(true);
    // A rule not known: any check not made there may have been its own.
    expect(coversPlace(c, at('10.0.0.1', 22), null)).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 22))).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 80))).toBe(true);
    // A host-level entry stands for every port of its host; a host-level finding meets every entry of its host.
    expect(coversPlace(c, at('10.0.0.2', 443), 'tls-weak-cipher')).toBe(false);
    expect(coversPlace(c, at('10.0.0.2', 443), 'http-trace')).toBe(true);
    expect(coversPlace(c, at('10.0.0.1', null), 'os-end-of-life')).toBe(true);
    expect(coversPlace(c, at('10.0.0.1', null), 'ssh-weak-host-key')).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', null), null)).toBe(false);
  });

  it('are read so that doubt keeps a finding open, and two entries of a place add up', () => {
    const c = coverageOf({
      coverage: {
        hosts: ['10.0.0.1'],
        ports: { tcp: '1-1024', udp: '161' },
        not_checked: [
          { host: ' 10.0.0.1 ', port: 'twenty-two', rules: ['a'] },
          { host: '10.0.0.1', port: 161, protocol: 'UDP', rules: 'b' },
          { host: '10.0.0.1', port: 25, rules: ['c'] },
          { host: '10.0.0.1', port: 25, rules: ['d'], reason: 'second' },
          { port: 80, rules: ['e'] },
          'not an entry',
        ],
      },
    })!;
    // A port that is not one: every port of the host.
    expect(coversPlace(c, at('10.0.0.1', 443), 'a')).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 443), 'x')).toBe(true);
    // Rules that are not a list: every check at that place.
    expect(coversPlace(c, { host: '10.0.0.1', port: 161, protocol: 'udp' }, 'x')).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 25), 'c')).toBe(false);
    expect(coversPlace(c, at('10.0.0.1', 25), 'd')).toBe(false);
    // Without a host an entry says nowhere.
    expect(coversPlace(c, at('10.0.0.1', 80), 'e')).toBe(true);
    expect([...c.notChecked.values()]).toEqual([
      { host: '10.0.0.1', port: null, protocol: 'tcp', rules: ['a'], reason: null },
      { host: '10.0.0.1', port: 161, protocol: 'udp', rules: null, reason: null },
      { host: '10.0.0.1', port: 25, protocol: 'tcp', rules: ['c', 'd'], reason: 'second' },
    ]);
  });

  it('are written back as they were read, and left out when there are none', () => {
    const c = coverageOf(doc)!;
    const block = coverageBlock({ hosts: c.hosts, ports: c.ports, notChecked: c.notChecked.values() });
    expect(block.not_checked).toEqual([
      { host: '10.0.0.1', port: 22, protocol: 'tcp', rules: ['ssh-weak-host-key'], reason: 'ssh-dss: no key' },
      { host: '10.0.0.2', protocol: 'tcp', rules: ['tls-weak-cipher'] },
    ]);
    expect(coverageOf({ coverage: block })!.notChecked).toEqual(c.notChecked);
    expect(coverageBlock({ hosts: c.hosts, ports: c.ports, notChecked: [] })).not.toHaveProperty('not_checked');
    expect(inferredCoverage({ findings: [{ host: '10.0.0.1' }] }).notChecked.size).toBe(0);
  });
});
