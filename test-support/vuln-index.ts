import {
  severityOfCvss,
  VULN_INDEX_FORMAT,
  type VulnIndex,
  type VulnIndexCve,
  type VulnIndexDebian,
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

/** A source package as the Debian tracker describes it, naming CVEs by id. */
export interface DebianPackageSpec {
  /** Release → the versions its repositories hold. */
  releases: Record<string, string[]>;
  /** CVE id → release → fixed version (`"0"`: never affected), or null while open. */
  cves: Record<string, Record<string, string | null>>;
  /** CVE id → releases where the tracker rates it unimportant. */
  unimportant?: Record<string, string[]>;
}

export function vulnIndex(
  specs: readonly CveSpec[],
  opts: { debian?: Record<string, DebianPackageSpec> } = {},
): VulnIndex {
  const cves: VulnIndexCve[] = [];
  const products: Record<string, VulnIndexRange[]> = {};
  specs.forEach((s, i) => {
    const cvss = s.cvss === undefined ? 7.5 : s.cvss;
    cves.push({
      id: s.id,
      cvss,
      cvss_version: cvss === null ? null : '3.1',
      severity: cvss === null ? null : severityOfCvss(cvss),
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
  const position = (id: string) => {
    const at = cves.findIndex((c) => c.id === id);
    if (at === -1) throw new Error(`${id} is not among the index's CVEs`);
    return at;
  };
  const debian: VulnIndexDebian | null =
    opts.debian === undefined
      ? null
      : Object.fromEntries(
          Object.entries(opts.debian).map(([name, p]) => [
            name,
            {
              releases: p.releases,
              cves: Object.entries(p.cves).map(([id, fixed]) => ({
                cve: position(id),
                fixed,
                ...(p.unimportant?.[id] === undefined ? {} : { unimportant: p.unimportant[id] }),
              })),
            },
          ]),
        );
  return {
    format: VULN_INDEX_FORMAT,
    version: 'test',
    generated_at: '2026-11-27T00:00:00.000Z',
    sources: {
      nvd: { records: cves.length, imported_at: '2026-11-26T10:00:00.000Z' },
      kev: null,
      epss: null,
      debian: debian === null ? null : { records: Object.keys(debian).length, imported_at: '2026-11-26T11:00:00.000Z' },
    },
    cves,
    products,
    debian,
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
