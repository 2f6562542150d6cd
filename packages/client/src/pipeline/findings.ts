import { findingFingerprint } from '@svc/protocol';
import { hostOf, type ScanFinding, type StageFinding } from './types.ts';

/**
 * Gives every finding an id within the session (`f-001`, ... in input order, unless it has
 * one) and its fingerprint when rule_id and host are known, so remediation tracking can match
 * across sessions and compliance rows can point at findings.
 */
export function normalizeFindings(findings: readonly ScanFinding[]): StageFinding[] {
  return findings.map((f, i) => {
    const host = hostOf(f);
    const fingerprint = f.fingerprint ?? (typeof f.rule_id === 'string' && f.rule_id.trim() !== '' && host !== null ? findingFingerprint({ rule_id: f.rule_id, host, port: f.port, protocol: f.protocol }) : undefined);
    return { ...f, id: f.id ?? `f-${String(i + 1).padStart(3, '0')}`, ...(fingerprint === undefined ? {} : { fingerprint }) };
  });
}
