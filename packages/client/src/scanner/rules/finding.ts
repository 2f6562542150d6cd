import type { FindingMatch } from '@svc/protocol';
import type { Category } from '../../pipeline/compliance-map.ts';
import type { ScanFinding } from '../../pipeline/types.ts';
import { primaryAddress, primaryHostname } from '../parse/host-info.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';

type Severity = NonNullable<ScanFinding['severity']>;

/** What a rule states about one weakness; where it was found comes from the host and port. */
export interface RuleResult {
  rule_id: string;
  title: string;
  severity: Severity;
  category: Category;
  evidence: string;
  description: string;
  remediation: string;
  cve?: readonly string[] | undefined;
  cwe?: readonly string[] | undefined;
  urls?: readonly string[] | undefined;
  cvss?: number | undefined;
  /** How its CVEs were matched; a rule naming CVEs without saying so observed the weakness itself (a check). */
  match?: FindingMatch | undefined;
}

/** The `match` a result's finding carries: its own, a confirmed check when it names CVEs, else none. */
export function matchOf(r: RuleResult): { match?: FindingMatch } {
  if (r.match !== undefined) return { match: r.match };
  return r.cve === undefined || r.cve.length === 0 ? {} : { match: { kind: 'check', confidence: 'confirmed' } };
}

/** The service name a finding carries: `https` for HTTP inside TLS, else nmap's name. */
export function serviceLabel(port: NmapPort): string | undefined {
  const s = port.service;
  if (s === undefined || s.name === '') return undefined;
  if (s.tunnel === 'ssl' && s.name === 'http') return 'https';
  return s.name;
}

/** A rule result's CVE, CWE and URL references, leaving out the empty lists. */
export function referencesOf(r: RuleResult): NonNullable<ScanFinding['references']> {
  return {
    ...(r.cve === undefined || r.cve.length === 0 ? {} : { cve: [...new Set(r.cve)] }),
    ...(r.cwe === undefined || r.cwe.length === 0 ? {} : { cwe: [...r.cwe] }),
    ...(r.urls === undefined || r.urls.length === 0 ? {} : { urls: [...r.urls] }),
  };
}

/** A finding on a host, on a port when given (fingerprints are left to the pipeline's normaliser). */
export function finding(host: NmapHost, port: NmapPort | undefined, r: RuleResult): ScanFinding {
  const address = primaryAddress(host);
  const hostname = primaryHostname(host);
  const service = port === undefined ? undefined : serviceLabel(port);
  const references = referencesOf(r);
  return {
    rule_id: r.rule_id,
    title: r.title,
    severity: r.severity,
    category: r.category,
    ...(address === undefined ? {} : { host: address }),
    ...(hostname === undefined ? {} : { hostname }),
    ...(port === undefined ? {} : { port: port.portid, protocol: port.protocol }),
    ...(service === undefined ? {} : { service }),
    evidence: r.evidence,
    description: r.description,
    remediation: r.remediation,
    ...(Object.keys(references).length === 0 ? {} : { references }),
    ...(r.cvss === undefined ? {} : { cvss: r.cvss }),
    ...matchOf(r),
  };
}

/** Open ports only: a closed or filtered port offers no service to judge. */
export function openPorts(host: NmapHost): NmapPort[] {
  return host.ports.filter((p) => p.state === 'open');
}

/** The `<service>` line as evidence: `tcp/2323 telnet (Linux telnetd) [probed, conf 10]`. */
export function serviceEvidence(port: NmapPort): string {
  const s = port.service;
  if (s === undefined) return `${port.protocol}/${port.portid} (no service detected)`;
  const what = [s.product, s.version, s.extrainfo].filter((x) => x !== undefined).join(' ');
  const how = s.method === undefined ? '' : ` [${s.method}${s.conf === undefined ? '' : `, conf ${s.conf}`}]`;
  return `${port.protocol}/${port.portid} ${s.tunnel === undefined ? '' : `${s.tunnel}/`}${s.name}${what === '' ? '' : ` (${what})`}${how}`;
}

const ORDER: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical'];

export function maxSeverity(a: Severity, b: Severity): Severity {
  return ORDER.indexOf(a) >= ORDER.indexOf(b) ? a : b;
}
