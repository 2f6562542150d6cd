import type { ScanFinding } from '../../pipeline/types.ts';
import { prioritisationOf } from '../../pipeline/vuln-enrich.ts';
import type { NmapService } from '../parse/types.ts';
import { matchKnownVulnerable } from '../versions/match.ts';
import { matchVulnIndex, type VulnLookup, type VulnMatch, vulnLookup } from '../versions/vuln-index-match.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { severityOfCvss } from './outdated-versions.ts';
import type { RuleFamily } from './types.ts';

/**
 * Findings from the vulnerability index (docs/vuln-matching.md): one per service and CVE, rule
 * id `cve:<id>` so the fingerprint stays the same across scans and versions. Every match is on
 * the reported version only, so each is "potential" in the hand table's words. A CVE the hand
 * table already reports on the same service is left to the table's finding (enrichment adds
 * the index's KEV and EPSS to it).
 */

/** The CVEs the hand table reports on this service. */
function handCves(service: NmapService): Set<string> {
  return new Set(matchKnownVulnerable(service).flatMap((m) => m.entry.cve.map((c) => c.toUpperCase())));
}

function productName(service: NmapService, m: VulnMatch): string {
  return service.product ?? m.product.split(':').slice(1).join(' ');
}

function verdict(m: VulnMatch, index: VulnLookup['index']): string {
  const debian = m.observed.debianRevision === undefined ? '' : ` Debian ${m.observed.debianRevision}`;
  const feed =
    index.sources.nvd === null
      ? 'the vulnerability index'
      : `NVD as imported ${index.sources.nvd.imported_at.slice(0, 10)}`;
  return (
    `version ${m.observed.upstream}${debian} of ${m.cpe} is in an affected range of ${m.cve.id}; potential: ` +
    `matched on the reported version only (${feed}), a distribution may have backported the fix`
  );
}

/** The findings of one service's matches. */
export function vulnFeedResults(service: NmapService, lookup: VulnLookup): VulnMatch[] {
  const hand = handCves(service);
  return matchVulnIndex(service, lookup).filter((m) => !hand.has(m.cve.id.toUpperCase()));
}

export const vulnFeed: RuleFamily = {
  id: 'vuln-feed',
  scripts: [],
  evaluate(host, ctx) {
    if (ctx.vulnIndex === undefined || ctx.vulnIndex === null) return [];
    const lookup = vulnLookup(ctx.vulnIndex);
    return openPorts(host).flatMap((port) => {
      const service = port.service;
      if (service === undefined || service.cpes.length === 0) return [];
      return vulnFeedResults(service, lookup).map((m): ScanFinding => {
        const product = productName(service, m);
        const scored = m.cve.cvss !== null;
        return {
          ...finding(host, port, {
            rule_id: `cve:${m.cve.id}`,
            title: `${product} ${m.observed.upstream}: ${m.cve.id} (potential)`,
            severity: m.cve.severity ?? (scored ? severityOfCvss(m.cve.cvss ?? 0) : 'medium'),
            category: 'vulnerable_software',
            evidence: `${serviceEvidence(port)}; ${verdict(m, lookup.index)}${scored ? '' : '; NVD gives no CVSS score yet (rated medium)'}`,
            description: `${product}: ${m.cve.summary}`,
            remediation: `Upgrade ${product} to a release the vendor lists as fixed for ${m.cve.id}, or to the distribution's fixed package; if the distribution backported the fix, record a risk exception with its advisory.`,
            cve: [m.cve.id],
            urls: [`https://nvd.nist.gov/vuln/detail/${m.cve.id}`],
            ...(m.cve.cvss === null ? {} : { cvss: m.cve.cvss }),
          }),
          ...prioritisationOf([m.cve]),
        };
      });
    });
  },
};
