import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { hostAddresses } from '../src/system-info.ts';

const nic = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address, family, internal, netmask: '', mac: '', cidr: null }) as os.NetworkInterfaceInfo;

describe('hostAddresses', () => {
  it('lists IPv4 before IPv6, without loopback, link-local or repeats', () => {
    expect(
      hostAddresses({
        lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)],
        eth0: [nic('fe80::1', 'IPv6'), nic('2001:db8::5', 'IPv6'), nic('10.0.0.5', 'IPv4')],
        eth1: [nic('192.168.1.7', 'IPv4'), nic('10.0.0.5', 'IPv4')],
        none: undefined,
      }),
    ).toEqual(['10.0.0.5', '192.168.1.7', '2001:db8::5']);
  });

  it('is empty on a host with loopback only', () => {
    expect(hostAddresses({ lo: [nic('127.0.0.1', 'IPv4', true)] })).toEqual([]);
  });
});
