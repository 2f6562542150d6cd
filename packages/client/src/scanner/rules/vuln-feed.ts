import { type FindingMatch, severityOfCvss } from '@svc/protocol';
import type { ScanFinding } from '../../pipeline/types.ts';
import { prioritisationOf } from '../../pipeline/vuln-enrich.ts';
import type { NmapService } from '../parse/types.ts';
import { type VulnLookup, type VulnMatch, vulnFeedResults, vulnLookup } from '../../cve-match/vuln-index-match.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import type { RuleFamily } from './types.ts';

/**
 * Findings from the vulnerability index (docs/vuln-matching.md): one per service and CVE, rule
 * id `cve:<id>` so the fingerprint stays the same across scans and versions. A match on the
 * upstream version alone is "potential" (a distribution may have backported the fix); one the
 * Debian security tracker decides for the package revision the banner names is "confirmed". A
 * CVE the hand table already reports on the same service is left to the table's finding
 * (enrichment adds the index's KEV and EPSS to it).
 */

function productName(service: NmapService, m: VulnMatch): string {
  return service.product ?? m.product.split(':').slice(1).join(' ');
}

const asOf = (imported: { imported_at: string } | null) =>
  imported === null ? '' : ` as imported ${imported.imported_at.slice(0, 10)}`;

function verdict(m: VulnMatch, index: VulnLookup['index']): string {
  const b = m.basis;
  if (b.kind === 'distribution_package') {
    const tracker = `the Debian security tracker${asOf(index.sources.debian)}`;
    const range = b.inRange ? `; version ${m.observed.upstream} is also in an NVD range of ${m.cve.id}` : '';
    return b.fixed === null
      ? `confirmed: Debian ${b.release}'s ${b.package} has no fix for ${m.cve.id} yet (open in ${tracker})${b.unimportant ? ', rated unimportant by Debian' : ''}; this package is ${b.version}${range}`
      : `confirmed: Debian ${b.release}'s ${b.package} fixed ${m.cve.id} in ${b.fixed}; this package is ${b.version}, before the fix (${tracker})${range}`;
  }
  const debian = m.observed.debianRevision === undefined ? '' : ` Debian ${m.observed.debianRevision}`;
  const feed = index.sources.nvd === null ? 'the vulnerability index' : `NVD${asOf(index.sources.nvd)}`;
  return (
    `version ${m.observed.upstream}${debian} of ${m.cpe} is in an affected range of ${m.cve.id}; potential: ` +
    `matched on the reported version only (${feed}), a distribution may have backported the fix` +
    (b.debianNote === null ? '' : `; the Debian revision could not decide: ${b.debianNote}`)
  );
}

function matchField(m: VulnMatch): FindingMatch {
  const b = m.basis;
  if (b.kind === 'version_range') return { kind: 'version_range', confidence: 'potential', source: 'NVD' };
  return {
    kind: 'distribution_package',
    confidence: 'confirmed',
    source: 'Debian security tracker',
    distribution: {
      name: 'debian',
      release: b.release,
      package: b.package,
      version: b.version,
      fixed_version: b.fixed,
    },
  };
}

function titleOf(product: string, m: VulnMatch): string {
  const b = m.basis;
  return b.kind === 'distribution_package'
    ? `${product} ${m.observed.upstream} (Debian ${m.observed.debianRevision}): ${m.cve.id}`
    : `${product} ${m.observed.upstream}: ${m.cve.id} (potential)`;
}

function remediationOf(product: string, m: VulnMatch): string {
  const b = m.basis;
  if (b.kind === 'version_range')
    return `Upgrade ${product} to a release the vendor lists as fixed for ${m.cve.id}, or to the distribution's fixed package; if the distribution backported the fix, record a risk exception with its advisory.`;
  return b.fixed === null
    ? `Debian ${b.release} has no fixed ${b.package} package for ${m.cve.id} yet: follow https://security-tracker.debian.org/tracker/${m.cve.id}, limit who can reach the service, or record a risk exception until a fix is published.`
    : `Upgrade Debian's ${b.package} packages to ${b.fixed} or later (apt-get update && apt-get upgrade from ${b.release}-security).`;
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
            title: titleOf(product, m),
            severity: m.cve.severity ?? (scored ? severityOfCvss(m.cve.cvss ?? 0) : 'medium'),
            category: 'vulnerable_software',
            evidence: `${serviceEvidence(port)}; ${verdict(m, lookup.index)}${scored ? '' : '; NVD gives no CVSS score yet (rated medium)'}`,
            description: `${product}: ${m.cve.summary}`,
            remediation: remediationOf(product, m),
            cve: [m.cve.id],
            urls: [
              `https://nvd.nist.gov/vuln/detail/${m.cve.id}`,
              ...(m.basis.kind === 'distribution_package'
                ? [`https://security-tracker.debian.org/tracker/${m.cve.id}`]
                : []),
            ],
            ...(m.cve.cvss === null ? {} : { cvss: m.cve.cvss }),
            match: matchField(m),
          }),
          ...prioritisationOf([m.cve]),
        };
      });
    });
  },
};
