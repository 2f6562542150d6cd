import { describe, expect, it } from 'vitest';
import { normalizeFindings } from '../src/pipeline/findings.ts';
import { buildTopology, subnetOf } from '../src/pipeline/topology.ts';

describe('topology', () => {
  it('nodes sorted by address with per-host risk, chained subnet links, subnets with host_count and avg_risk', () => {
    const findings = normalizeFindings([
      { title: 'a', severity: 'critical', host: '10.0.0.10', port: 22 },
      { title: 'b', severity: 'high', host: '10.0.0.10', port: 22 },
      { title: 'c', severity: 'medium', host: '10.0.0.2', port: 80 },
      { title: 'd', severity: 'low', host: '192.168.1.5' },
    ]);
    const topo = buildTopology(
      [
        { ip: '10.0.0.10', hostname: 'web01', os_guess: 'Linux 5.x' },
        { ip: '10.0.0.2', open_ports: [80, 443, 8080] },
        { ip: '10.0.0.3' },
      ],
      findings,
    );
    expect(topo.nodes).toEqual([
      { ip: '10.0.0.2', port_count: 3, risk_score: 42, risk_grade: 'C', subnet: '10.0.0.0/24' },
      { ip: '10.0.0.3', port_count: 0, risk_score: 0, risk_grade: 'A', subnet: '10.0.0.0/24' },
      {
        ip: '10.0.0.10',
        hostname: 'web01',
        os_guess: 'Linux 5.x',
        port_count: 1,
        risk_score: 70,
        risk_grade: 'D',
        subnet: '10.0.0.0/24',
      },
      { ip: '192.168.1.5', port_count: 0, risk_score: 1, risk_grade: 'A', subnet: '192.168.1.0/24' },
    ]);
    expect(topo.links).toEqual([
      { source_ip: '10.0.0.2', target_ip: '10.0.0.3', type: 'subnet' },
      { source_ip: '10.0.0.3', target_ip: '10.0.0.10', type: 'subnet' },
    ]);
    expect(topo.subnets).toEqual([
      { prefix: '10.0.0.0/24', host_count: 3, avg_risk: 37.3 },
      { prefix: '192.168.1.0/24', host_count: 1, avg_risk: 1 },
    ]);
  });

  it('a non-IPv4 address is a subnet of its own; no hosts gives an empty topology', () => {
    expect(subnetOf('fe80::1')).toBe('fe80::1');
    expect(buildTopology([], [])).toEqual({ nodes: [], links: [], subnets: [] });
  });
});
