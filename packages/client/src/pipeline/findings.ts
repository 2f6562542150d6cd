import { findingFingerprint } from '@svc/protocol/node';
import { hostOf, type ScanFinding, type StageFinding } from './types.ts';

/**
 * Gives every finding an id within the session and its fingerprint when rule_id and host are
 * known, so remediation tracking can match across sessions and compliance rows can point at
 * findings. A given id is kept the first time it appears; findings without one (or repeating
 * one) get the next free `f-001`, `f-002`... so ids stay unique.
 */
export function normalizeFindings(findings: readonly ScanFinding[]): StageFinding[] {
  const given = new Set(findings.map((f) => f.id).filter((id) => typeof id === 'string' && id !== ''));
  const used = new Set<string>();
  let next = 1;
  const fresh = () => {
    let id: string;
    do id = `f-${String(next++).padStart(3, '0')}`;
    while (given.has(id) || used.has(id));
    return id;
  };
  return findings.map((f) => {
    const host = hostOf(f);
    const fingerprint =
      f.fingerprint ??
      (typeof f.rule_id === 'string' && f.rule_id.trim() !== '' && host !== null
        ? findingFingerprint({ rule_id: f.rule_id, host, port: f.port, protocol: f.protocol })
        : undefined);
    const id = typeof f.id === 'string' && f.id !== '' && !used.has(f.id) ? f.id : fresh();
    used.add(id);
    return { ...f, id, ...(fingerprint === undefined ? {} : { fingerprint }) };
  });
}
