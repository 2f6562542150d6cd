import type { RuleResult } from '../rules/finding.ts';
import { matchOf, referencesOf } from '../rules/finding.ts';
import type { SourcedFinding, ToolInvocation } from './types.ts';

export interface ToolFindingOptions {
  /** Transport of the service (SNMP and DNS answer over UDP). Default tcp. */
  protocol?: string;
  /** Evidence already starts with the command that found it, so the tool's name is not put in front. */
  evidenceAsIs?: boolean;
}

/**
 * A finding from a tool's output on the service of one invocation, named with the tool as its
 * source (in `source` and, unless the evidence already says it, at the head of the evidence),
 * shaped like nmap's rule findings so that the same weakness gets the same rule id and
 * fingerprint whichever tool saw it.
 */
export function toolFinding(
  source: string,
  inv: ToolInvocation,
  r: RuleResult,
  opts: ToolFindingOptions = {},
): SourcedFinding {
  const references = referencesOf(r);
  return {
    rule_id: r.rule_id,
    title: r.title,
    severity: r.severity,
    category: r.category,
    ...(inv.host === undefined ? {} : { host: inv.host }),
    ...(inv.port === undefined ? {} : { port: inv.port, protocol: opts.protocol ?? 'tcp' }),
    ...(inv.service === undefined ? {} : { service: inv.service }),
    evidence: opts.evidenceAsIs ? r.evidence : `${source}: ${r.evidence}`,
    description: r.description,
    remediation: r.remediation,
    ...(Object.keys(references).length === 0 ? {} : { references }),
    ...(r.cvss === undefined ? {} : { cvss: r.cvss }),
    ...matchOf(r),
    source,
  };
}

/** The argument after a flag in an invocation's fixed argv (e.g. the community after `-c`). */
export function argAfter(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

/** A list as evidence: the first `max` items, then how many more. */
export function listEvidence(items: readonly string[], max = 15): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown}, ... (${items.length - max} more)` : shown;
}
