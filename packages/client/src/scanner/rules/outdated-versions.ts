import { type FindingMatch, severityOfCvss } from '@svc/protocol';
import { KNOWN_VULNERABLE_CHECKED, type KnownVulnerable } from '../../cve-match/known-vulnerable.ts';
import { matchKnownVulnerable, type ObservedVersion } from '../../cve-match/match.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import type { RuleFamily } from './types.ts';

/** Why the version matched, and how sure that is: a known Debian revision decides, a bare version is "potential". */
function verdict(entry: KnownVulnerable, observed: ObservedVersion): string {
  const debianFix = entry.debianFixed?.[observed.upstream];
  if (observed.debianRevision !== undefined && debianFix !== undefined)
    return `version ${observed.upstream} Debian ${observed.debianRevision} predates the Debian fix ${debianFix}`;
  return (
    `version ${observed.upstream}${observed.debianRevision === undefined ? '' : ` Debian ${observed.debianRevision}`} ` +
    `is in the affected range; potential: matched on the reported version only (known-vulnerable table of ` +
    `${KNOWN_VULNERABLE_CHECKED}), a distribution may have backported the fix`
  );
}

/** A Debian revision the table's Debian fix decides is confirmed; otherwise the version range is potential. */
function matchBy(entry: KnownVulnerable, observed: ObservedVersion): FindingMatch {
  const decided = observed.debianRevision !== undefined && entry.debianFixed?.[observed.upstream] !== undefined;
  return decided
    ? { kind: 'distribution_package', confidence: 'confirmed', source: 'known-vulnerable table' }
    : { kind: 'version_range', confidence: 'potential', source: 'known-vulnerable table' };
}

export const outdatedVersions: RuleFamily = {
  id: 'outdated-versions',
  scripts: [],
  evaluate(host) {
    return openPorts(host).flatMap((port) => {
      const service = port.service;
      if (service === undefined) return [];
      return matchKnownVulnerable(service).map(({ entry, observed }) =>
        finding(host, port, {
          rule_id: `outdated-software:${entry.id}`,
          title: `${entry.title} (${entry.cve.join(', ')})`,
          severity: severityOfCvss(entry.cvss),
          category: 'vulnerable_software',
          evidence: `${serviceEvidence(port)}; ${verdict(entry, observed)}`,
          description: `${entry.product}: ${entry.summary}`,
          remediation: `Upgrade ${entry.product} to ${entry.fixed} or later, or to the distribution's fixed package.`,
          cve: entry.cve,
          urls: entry.source.filter((s) => s.startsWith('http')),
          cvss: entry.cvss,
          match: matchBy(entry, observed),
        }),
      );
    });
  },
};
