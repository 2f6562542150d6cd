import { riskGrade, riskScore, scoringCounts, type RiskGrade } from '@svc/protocol';
import { hostOf, type HostInfo, type StageFinding } from './types.ts';

/**
 * The topology block: one node per host (discovered hosts first, then hosts only findings
 * name), sorted by address; each IPv4 host's subnet is its /24 prefix (`10.0.1.0/24`), any
 * other address is a subnet of its own. Hosts of a subnet are linked in a chain (n − 1 links,
 * not every pair), and each subnet carries its host count and average host risk (one decimal).
 */

export interface TopologyNode {
  ip: string;
  hostname?: string;
  os_guess?: string;
  port_count: number;
  risk_score: number;
  risk_grade: RiskGrade;
  subnet: string;
}

export interface TopologyBlock {
  nodes: TopologyNode[];
  links: { source_ip: string; target_ip: string; type: 'subnet' }[];
  subnets: { prefix: string; host_count: number; avg_risk: number }[];
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function subnetOf(ip: string): string {
  const m = IPV4.exec(ip);
  return m ? `${m[1]}.${m[2]}.${m[3]}.0/24` : ip;
}

/** IPv4 addresses in numeric order, then everything else by text. */
function compareAddresses(a: string, b: string): number {
  const ma = IPV4.exec(a);
  const mb = IPV4.exec(b);
  if (ma && mb) {
    for (let i = 1; i <= 4; i++) {
      const d = Number(ma[i]) - Number(mb[i]);
      if (d !== 0) return d;
    }
    return 0;
  }
  if (ma) return -1;
  if (mb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function buildTopology(hosts: readonly HostInfo[], findings: readonly StageFinding[]): TopologyBlock {
  const known = new Map<string, HostInfo>();
  for (const h of hosts) if (!known.has(h.ip)) known.set(h.ip, h);
  // Each host's findings in input order, grouped in one pass (not one scan of all findings per host).
  const byHost = new Map<string, StageFinding[]>();
  for (const f of findings) {
    const ip = hostOf(f);
    if (ip === null) continue;
    const mine = byHost.get(ip);
    if (mine === undefined) byHost.set(ip, [f]);
    else mine.push(f);
    if (!known.has(ip)) known.set(ip, { ip, ...(typeof f.hostname === 'string' ? { hostname: f.hostname } : {}) });
  }
  const nodes = [...known.values()]
    .sort((a, b) => compareAddresses(a.ip, b.ip))
    .map((h): TopologyNode => {
      const mine = byHost.get(h.ip) ?? [];
      const risk = riskScore(scoringCounts(mine));
      const ports = h.open_ports ?? mine.map((f) => f.port).filter((p) => p !== undefined);
      return {
        ip: h.ip,
        ...(h.hostname === undefined ? {} : { hostname: h.hostname }),
        ...(h.os_guess === undefined ? {} : { os_guess: h.os_guess }),
        port_count: new Set(ports).size,
        risk_score: risk,
        risk_grade: riskGrade(risk),
        subnet: subnetOf(h.ip),
      };
    });
  const bySubnet = new Map<string, TopologyNode[]>();
  for (const n of nodes) {
    const members = bySubnet.get(n.subnet);
    if (members === undefined) bySubnet.set(n.subnet, [n]);
    else members.push(n);
  }
  const links: TopologyBlock['links'] = [];
  const subnets: TopologyBlock['subnets'] = [];
  for (const [prefix, members] of bySubnet) {
    for (let i = 1; i < members.length; i++)
      links.push({ source_ip: members[i - 1]!.ip, target_ip: members[i]!.ip, type: 'subnet' });
    const avg = members.reduce((a, n) => a + n.risk_score, 0) / members.length;
    subnets.push({ prefix, host_count: members.length, avg_risk: Math.round(avg * 10) / 10 });
  }
  return { nodes, links, subnets };
}
