import type { ScanFinding } from '../../pipeline/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import type { SourcedFinding, ToolInvocation } from './types.ts';

/**
 * A finding from a tool's output on the service of one invocation, named with the tool as its
 * source (in `source` and at the head of the evidence), shaped like nmap's rule findings so that
 * the same weakness gets the same rule id and fingerprint whichever tool saw it.
 */
export function toolFinding(source: string, inv: ToolInvocation, r: RuleResult): SourcedFinding {
  const references: NonNullable<ScanFinding['references']> = {
    ...(r.cve === undefined || r.cve.length === 0 ? {} : { cve: [...new Set(r.cve)] }),
    ...(r.cwe === undefined || r.cwe.length === 0 ? {} : { cwe: [...r.cwe] }),
    ...(r.urls === undefined || r.urls.length === 0 ? {} : { urls: [...r.urls] }),
  };
  return {
    rule_id: r.rule_id,
    title: r.title,
    severity: r.severity,
    category: r.category,
    ...(inv.host === undefined ? {} : { host: inv.host }),
    ...(inv.port === undefined ? {} : { port: inv.port, protocol: 'tcp' }),
    ...(inv.service === undefined ? {} : { service: inv.service }),
    evidence: `${source}: ${r.evidence}`,
    description: r.description,
    remediation: r.remediation,
    ...(Object.keys(references).length === 0 ? {} : { references }),
    ...(r.cvss === undefined ? {} : { cvss: r.cvss }),
    source,
  };
}
