import { describe, expect, it } from 'vitest';
import { hostMatches, hostMatchOf } from '../src/host-match.ts';

/** The host filter's rule: exact for an address, prefix for a name or a partial address. */
describe('hostMatchOf', () => {
  const hosts = Array.from({ length: 20 }, (_, i) => `10.99.0.${i === 0 ? 17 : 170 + i}`).concat(['10.99.0.1']);

  it('a whole IPv4 address matches that address only, not the addresses it starts', () => {
    const m = hostMatchOf(' 10.99.0.17 ');
    expect(m).toStrictEqual({ kind: 'address', value: '10.99.0.17' });
    expect(hosts.filter((h) => hostMatches(m, h, null))).toStrictEqual(['10.99.0.17']);
    expect(hostMatches(m, '110.99.0.17', null)).toBe(false);
  });

  it('an IPv6 address matches exactly, whatever its case', () => {
    const m = hostMatchOf('FD00::1');
    expect(m).toStrictEqual({ kind: 'address', value: 'fd00::1' });
    expect(hostMatches(m, 'fd00::1', null)).toBe(true);
    expect(hostMatches(m, 'fd00::10', null)).toBe(false);
  });

  it('a name matches host names and addresses that start with it, case aside', () => {
    const m = hostMatchOf('Web');
    expect(m).toStrictEqual({ kind: 'prefix', value: 'web' });
    expect(hostMatches(m, '10.0.0.1', 'web-01.example.test')).toBe(true);
    expect(hostMatches(m, '10.0.0.2', 'WEB-02')).toBe(true);
    expect(hostMatches(m, '10.0.0.3', 'intranet-web')).toBe(false);
    expect(hostMatches(m, '10.0.0.4', null)).toBe(false);
  });

  it('the start of an address is a prefix: a subnet', () => {
    const m = hostMatchOf('10.99.0.');
    expect(m.kind).toBe('prefix');
    expect(hosts.filter((h) => hostMatches(m, h, null))).toHaveLength(hosts.length);
    expect(hostMatches(hostMatchOf('10.99.0.1'), '10.99.0.17', null)).toBe(false);
  });
});
