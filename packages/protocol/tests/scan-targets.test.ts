import { describe, expect, it } from 'vitest';
import {
  checkScanTarget,
  checkScanTargets,
  DEFAULT_SCAN_MAX_ADDRESSES,
  hostKindOf,
  MAX_SCAN_TARGETS,
  scanBudgetOf,
} from '../src/scan-targets.ts';

/** The one target rule of the portal (run_scan, update_schedule), `svc scan` and svcd. */

const BUDGET = { maxAddresses: DEFAULT_SCAN_MAX_ADDRESSES };

describe('checkScanTarget: accepted forms', () => {
  it.each([
    ['192.168.1.10', 'ipv4', 1],
    ['10.231.0.0/24', 'cidr4', 256],
    ['10.0.0.0/16', 'cidr4', 65_536],
    ['10.0.0.5/32', 'cidr4', 1],
    ['10.0.0.1-20', 'range4', 20],
    ['192.168.0-3.1-254', 'range4', 4 * 254],
    ['0-255.0-255.0-255.0-255', 'range4', 2 ** 32],
    ['0.0.0.0/0', 'cidr4', 2 ** 32],
    ['10.0.0.0/8', 'cidr4', 2 ** 24],
    ['fe80::1', 'ipv6', 1],
    ['::1', 'ipv6', 1],
    ['2001:db8::/120', 'cidr6', 256],
    ['2001:db8::/64', 'cidr6', 2 ** 64],
    ['scanme.example.org', 'hostname', 1],
    ['db-01', 'hostname', 1],
    ['a', 'hostname', 1],
    ['host.example.', 'hostname', 1],
  ])('%s is %s covering %d addresses', (value, kind, addresses) => {
    expect(checkScanTarget(value)).toEqual({ ok: true, target: { value, kind, addresses } });
  });
});

describe('checkScanTarget: refused values', () => {
  it.each([
    ['', 'empty'],
    ['-oN /tmp/x', 'starts with "-" (a scanner would read it as an option)'],
    ['-iL', 'starts with "-" (a scanner would read it as an option)'],
    ['--script=http-title', 'starts with "-" (a scanner would read it as an option)'],
    ['10.0.0.1\n-oN /tmp/x', 'contains whitespace or a control character'],
    ['10.0.0.1 -iL /dev/null', 'contains whitespace or a control character'],
    ['10.0.0.1\t', 'contains whitespace or a control character'],
    ['10.0.0.1\u009b', 'contains whitespace or a control character'],
    ['file:///etc/passwd', 'a URL: give the host name or address only'],
    ['http://10.0.0.1/', 'a URL: give the host name or address only'],
    ['host.example:22', 'host:port: give the host only (the profile or --ports selects ports)'],
    ['10.0.0.1:22', 'host:port: give the host only (the profile or --ports selects ports)'],
    ['$(id)', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['`id`', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['10.0.0.1;id', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['10.0.0.1|id', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ["'10.0.0.1'", 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['10.0.0.*', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['host_name.example', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['fe80::1%eth0', 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)'],
    ['10.0.0.256', 'not an address, CIDR block, IPv4 range or host name'],
    ['999.1.1.1', 'not an address, CIDR block, IPv4 range or host name'],
    ['010.0.0.1', 'not an address, CIDR block, IPv4 range or host name'],
    ['10.0.0.5-1', 'not an address, CIDR block, IPv4 range or host name'],
    ['10.0.0.1-256', 'not an address, CIDR block, IPv4 range or host name'],
    ['10.0.0-', 'not an address, CIDR block, IPv4 range or host name'],
    ['example..org', 'not an address, CIDR block, IPv4 range or host name'],
    ['-host.example', 'starts with "-" (a scanner would read it as an option)'],
    ['host-.example', 'not an address, CIDR block, IPv4 range or host name'],
    [`${'a'.repeat(64)}.example`, 'not an address, CIDR block, IPv4 range or host name'],
    ['10.0.0.0/33', 'IPv4 prefix above 32'],
    ['::/129', 'IPv6 prefix above 128'],
    ['10.0.0.1/24/1', 'not a CIDR block'],
    ['10.0.0.0/', 'not a CIDR block'],
    ['host.example/24', 'not a CIDR block'],
    ['gg::1', 'not an IPv6 address'],
    ['1:2:3:4:5:6:7:8:9', 'not an IPv6 address'],
    ['::ffff:10.0.0.1', 'an IPv4-mapped IPv6 address: give the IPv4 address'],
    ['::FFFF:a00:1', 'an IPv4-mapped IPv6 address: give the IPv4 address'],
    ['0:0:0:0:0:ffff:10.0.0.1', 'an IPv4-mapped IPv6 address: give the IPv4 address'],
    ['::ffff:10.0.0.0/120', 'an IPv4-mapped IPv6 address: give the IPv4 address'],
  ])('refuses %j: %s', (value, reason) => {
    expect(checkScanTarget(value)).toEqual({
      ok: false,
      message: `invalid target ${JSON.stringify(value)}: ${reason}`,
    });
  });

  it('quotes at most 80 characters of a long value', () => {
    const value = `${'a'.repeat(300)};`;
    const check = checkScanTarget(value);
    expect(check.ok).toBe(false);
    if (!check.ok)
      expect(check.message).toBe(
        `invalid target "${'a'.repeat(80)}…": contains characters outside letters, digits and ". : / -" (shell or nmap syntax)`,
      );
  });
});

describe('checkScanTargets: lists and the address budget', () => {
  it('trims entries, drops empty ones and sums the addresses', () => {
    expect(checkScanTargets(' 10.0.0.1 , host.example,,10.0.1.0/24 ', BUDGET)).toEqual({
      ok: true,
      list: '10.0.0.1,host.example,10.0.1.0/24',
      addresses: 258,
      targets: [
        { value: '10.0.0.1', kind: 'ipv4', addresses: 1 },
        { value: 'host.example', kind: 'hostname', addresses: 1 },
        { value: '10.0.1.0/24', kind: 'cidr4', addresses: 256 },
      ],
    });
  });

  it.each([
    ['', 'no targets were specified'],
    [' , ,', 'no targets were specified'],
    ['10.0.0.1,--script=x', 'invalid target "--script=x": starts with "-" (a scanner would read it as an option)'],
    ['10.0.0.1,::1', 'IPv4 and IPv6 targets cannot be scanned in one run'],
    ['host.example,fe80::1', 'IPv4 and IPv6 targets cannot be scanned in one run'],
    [
      '0-255.0-255.0-255.0-255',
      'targets cover 4294967296 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)',
    ],
    ['0.0.0.0/0', 'targets cover 4294967296 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)'],
    ['10.0.0.0/8', 'targets cover 16777216 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)'],
    [
      '::/64',
      'targets cover 18446744073709551616 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)',
    ],
    // Every entry fits; together they do not.
    [
      '10.0.0.0/16,10.1.0.0/24',
      'targets cover 65792 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)',
    ],
    [
      Array.from({ length: MAX_SCAN_TARGETS + 1 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(','),
      `too many targets: ${MAX_SCAN_TARGETS + 1} entries, at most ${MAX_SCAN_TARGETS} per run`,
    ],
  ])('refuses %j', (input, message) => {
    expect(checkScanTargets(input, BUDGET)).toEqual({ ok: false, message });
  });

  it('accepts exactly the budget and the entry cap', () => {
    expect(checkScanTargets('10.0.0.0/17,10.1.0.0/17', BUDGET)).toMatchObject({ ok: true, addresses: 65_536 });
    const many = Array.from({ length: MAX_SCAN_TARGETS }, (_, i) => `10.0.0.${i}`).join(',');
    expect(checkScanTargets(many, BUDGET)).toMatchObject({ ok: true, addresses: MAX_SCAN_TARGETS });
  });

  it('a configured budget replaces the default; without a budget only the forms are checked', () => {
    expect(checkScanTargets('10.0.0.0/8', { maxAddresses: 2 ** 24 })).toMatchObject({ ok: true });
    expect(checkScanTargets('10.0.0.0/24', { maxAddresses: 255 })).toEqual({
      ok: false,
      message: 'targets cover 256 addresses, more than the 255 allowed per run (SVC_SCAN_MAX_ADDRESSES)',
    });
    expect(checkScanTargets('0.0.0.0/0', null)).toMatchObject({ ok: true, addresses: 2 ** 32 });
    expect(checkScanTargets('10.0.0.1,::1', null)).toMatchObject({ ok: false });
  });
});

describe('hostKindOf: what names one host in an imported finding', () => {
  it.each([
    ['192.0.2.10', 'ipv4'],
    ['2001:db8::7', 'ipv6'],
    ['::ffff:192.0.2.1', 'ipv6'],
    ['web.lab.example', 'hostname'],
    ['DB-01', 'hostname'],
    ['host.example.', 'hostname'],
  ])('%s is %s', (value, kind) => {
    expect(hostKindOf(value)).toBe(kind);
  });

  it.each([
    '',
    '<script>',
    'two words',
    'tab\there',
    'ctl\u0001x',
    'new\nline',
    'db_01',
    '10.0.0.1/24',
    '10.0.0.1-20',
    '10.0.0.01',
    '192.0.2.10:443',
    'fe80::1%eth0',
    '-oX',
    `${'a'.repeat(64)}.example`,
    `${'a.'.repeat(126)}com`,
    'https://web.example',
  ])('%j names no host', (value) => {
    expect(hostKindOf(value)).toBeUndefined();
  });
});

describe('scanBudgetOf: the SVC_SCAN_MAX_ADDRESSES setting', () => {
  it.each([
    [undefined, DEFAULT_SCAN_MAX_ADDRESSES],
    ['', DEFAULT_SCAN_MAX_ADDRESSES],
    [' 256 ', 256],
    ['1', 1],
    ['16777216', 16_777_216],
  ])('%j gives %d', (raw, maxAddresses) => {
    expect(scanBudgetOf(raw)).toEqual({ ok: true, budget: { maxAddresses } });
  });

  it.each(['0', '16777217', '-1', '1e6', '65,536', 'lots'])('%j is refused', (raw) => {
    expect(scanBudgetOf(raw)).toEqual({
      ok: false,
      message: `SVC_SCAN_MAX_ADDRESSES must be a whole number from 1 to 16777216 (got "${raw}")`,
    });
  });
});
