import { type Finding, RISK_WEIGHTS, type Severity } from '@svc/protocol';
import { cvesOf, hostOf, SEVERITY_RANK, severityOf } from './facts.ts';

/**
 * The top risks of a session (docs/scanner/report.md): findings grouped by the weakness they show
 * (rule id, else title), weaknesses of one family merged (RC4, SWEET32 and TLS 1.0 are one
 * "weak TLS" risk for the reader, as ADVNessusAnalyzer does), ranked by severity weight times
 * the hosts affected, the higher severity first on a tie.
 */

interface Family {
  key: string;
  title: string;
  test: RegExp;
}

/** Matched against rule id and title together. */
const FAMILIES: readonly Family[] = [
  {
    key: 'family:weak-tls',
    title: 'Weak TLS/SSL configuration',
    test: /\b(tls-deprecated|tls-weak|sslv[23]|tlsv?1\.[01]|tls ?1\.[01]|rc4|sweet32|3des|export[- ]cipher|ssl-enum-ciphers|ssl-dh-params|weak[- ](tls|ssl|cipher)|dh[- ]?1024)\b/i,
  },
  {
    key: 'family:weak-ssh',
    title: 'Weak SSH algorithms',
    test: /\b(ssh2-enum-algos|ssh-weak|weak[- ]ssh|ssh[- ]?(cbc|hmac|kex|rsa-sha1)|diffie-hellman-group1|arcfour|hmac-md5)\b/i,
  },
  {
    key: 'family:certificate',
    title: 'Certificate problems',
    test: /\b(self[- ]signed|expired[- ]cert|cert(ificate)?[- ](expired|weak|self)|ssl-cert)\b/i,
  },
];

export interface TopRisk {
  key: string;
  title: string;
  severity: Severity;
  hosts: string[];
  findingCount: number;
  /** Distinct titles merged into this risk (more than one when a family merged them). */
  titles: string[];
  description: string | null;
  remediation: string | null;
  cves: string[];
  /** A finding of the risk names a known-exploited CVE. */
  kev: boolean;
  rank: number;
}

/** Findings of one rule and title share a key: computed once per pair, not per finding. */
function keyCache(): (f: Finding) => { key: string; familyTitle: string | null } {
  const cache = new Map<string, { key: string; familyTitle: string | null }>();
  return (f) => {
    const id = `${f.rule_id ?? ''}\u0000${f.title ?? ''}`;
    let k = cache.get(id);
    if (k === undefined) {
      k = riskKeyOf(f);
      cache.set(id, k);
    }
    return k;
  };
}

export function riskKeyOf(f: Finding): { key: string; familyTitle: string | null } {
  const text = `${f.rule_id ?? ''} ${f.title ?? ''}`;
  const family = FAMILIES.find((fam) => fam.test.test(text));
  if (family) return { key: family.key, familyTitle: family.title };
  const rule = typeof f.rule_id === 'string' && f.rule_id.trim() !== '' ? f.rule_id.trim() : null;
  return { key: rule === null ? `title:${(f.title ?? '').trim().toLowerCase()}` : `rule:${rule}`, familyTitle: null };
}

export function topRisks(findings: readonly Finding[], limit: number): TopRisk[] {
  const groups = new Map<
    string,
    {
      familyTitle: string | null;
      severity: Severity;
      hosts: Set<string>;
      count: number;
      titles: Set<string>;
      description: string | null;
      remediation: string | null;
      cves: Set<string>;
      kev: boolean;
    }
  >();
  const keyOf = keyCache();
  for (const f of findings) {
    const severity = severityOf(f);
    if (severity === 'info') continue;
    const { key, familyTitle } = keyOf(f);
    let g = groups.get(key);
    if (g === undefined) {
      g = {
        familyTitle,
        severity,
        hosts: new Set(),
        count: 0,
        titles: new Set(),
        description: null,
        remediation: null,
        cves: new Set(),
        kev: false,
      };
      groups.set(key, g);
    }
    if (SEVERITY_RANK[severity] > SEVERITY_RANK[g.severity]) g.severity = severity;
    g.hosts.add(hostOf(f));
    g.count++;
    g.titles.add(f.title?.trim() || f.rule_id?.trim() || 'Untitled finding');
    g.description ??= f.description?.trim() || null;
    g.remediation ??= f.remediation?.trim() || f.solution?.trim() || null;
    for (const c of cvesOf(f)) g.cves.add(c);
    if (f.kev === true) g.kev = true;
  }
  return [...groups]
    .map(([key, g]) => ({
      key,
      title: g.familyTitle ?? [...g.titles][0] ?? 'Untitled finding',
      severity: g.severity,
      hosts: [...g.hosts].sort(),
      findingCount: g.count,
      titles: [...g.titles].sort(),
      description: g.description,
      remediation: g.remediation,
      cves: [...g.cves].sort(),
      kev: g.kev,
      // Known exploited weighs as critical, as in the score.
      rank: RISK_WEIGHTS[g.kev ? 'critical' : g.severity] * g.hosts.size,
    }))
    .sort(
      (a, b) =>
        b.rank - a.rank ||
        SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
        b.findingCount - a.findingCount ||
        a.title.localeCompare(b.title),
    )
    .slice(0, limit);
}
