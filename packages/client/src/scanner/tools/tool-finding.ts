import type { ScanFinding } from '../../pipeline/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import type { SourcedFinding, ToolInvocation } from './types.ts';

/**
 * A finding on the host and port one invocation looked at, with the tool as its source. Unlike
 * finding.ts's, the transport is given (SNMP and DNS answer over UDP) and the evidence is the
 * tool's own line, which already starts with the command that found it.
 */
export function toolFinding(source: string, inv: ToolInvocation, protocol: string, r: RuleResult): SourcedFinding {
  const references: NonNullable<ScanFinding['references']> = {
    ...(r.cve === undefined || r.cve.length === 0 ? {} : { cve: [...r.cve] }),
    ...(r.cwe === undefined || r.cwe.length === 0 ? {} : { cwe: [...r.cwe] }),
    ...(r.urls === undefined || r.urls.length === 0 ? {} : { urls: [...r.urls] }),
  };
  return {
    rule_id: r.rule_id,
    title: r.title,
    severity: r.severity,
    category: r.category,
    ...(inv.host === undefined ? {} : { host: inv.host }),
    ...(inv.port === undefined ? {} : { port: inv.port, protocol }),
    ...(inv.service === undefined ? {} : { service: inv.service }),
    evidence: r.evidence,
    description: r.description,
    remediation: r.remediation,
    ...(Object.keys(references).length === 0 ? {} : { references }),
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
