import {
  VULN_INDEX_FORMAT,
  type Severity,
  type VulnIndex,
  type VulnIndexCve,
  type VulnIndexRange,
} from '@svc/protocol';

/** A vulnerability index for tests, built directly (no feed files): CVEs with their product ranges. */

export interface CveSpec {
  id: string;
  cvss?: number | null;
  summary?: string;
  /** The catalogue's dateAdded when known exploited. */
  kev?: string | null;
  epss?: number | null;
  epss_percentile?: number | null;
  /** `part:vendor:product` → the ranges naming this CVE. */
  affects?: Record<string, Omit<VulnIndexRange, 'cve'>[]>;
}

function severityOf(cvss: number | null): Severity | null {
  if (cvss === null) return null;
  if (cvss >= 9) return 'critical';
  if (cvss >= 7) return 'high';
  if (cvss >= 4) return 'medium';
  return cvss > 0 ? 'low' : 'info';
}

export function vulnIndex(specs: readonly CveSpec[]): VulnIndex {
  const cves: VulnIndexCve[] = [];
  const products: Record<string, VulnIndexRange[]> = {};
  specs.forEach((s, i) => {
    const cvss = s.cvss === undefined ? 7.5 : s.cvss;
    cves.push({
      id: s.id,
      cvss,
      cvss_version: cvss === null ? null : '3.1',
      severity: severityOf(cvss),
      summary: s.summary ?? `Summary of ${s.id}.`,
      kev:
        s.kev === undefined || s.kev === null ? null : { date_added: s.kev, due_date: null, known_ransomware: false },
      epss: s.epss ?? null,
      epss_percentile: s.epss_percentile ?? null,
    });
    for (const [key, ranges] of Object.entries(s.affects ?? {})) {
      products[key] ??= [];
      for (const r of ranges) products[key].push({ cve: i, ...r });
    }
  });
  return {
    format: VULN_INDEX_FORMAT,
    version: 'test',
    generated_at: '2026-11-27T00:00:00.000Z',
    sources: {
      nvd: { records: cves.length, imported_at: '2026-11-26T10:00:00.000Z' },
      kev: null,
      epss: null,
    },
    cves,
    products,
  };
}

/** A known-exploited finding as a session file carries it after enrichment (docs/vuln-matching.md). */
export const KEV_FINDING = {
  rule_id: 'cve:CVE-2024-6387',
  title: 'OpenSSH 9.2p1: CVE-2024-6387 (potential)',
  severity: 'high',
  host: '10.0.0.2',
  port: 22,
  protocol: 'tcp',
  cvss: 8.1,
  references: { cve: ['CVE-2024-6387'] },
  kev: true,
  kev_date_added: '2025-01-10',
  epss: 0.42,
  epss_percentile: 0.971,
} as const;
