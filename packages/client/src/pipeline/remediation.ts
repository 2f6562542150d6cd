import { lenient, REMEDIATION_STATUSES, severityOf } from '@svc/protocol';
import { hostOf, type Remediation, type RemediationStatus, type StageFinding } from './types.ts';

/**
 * Remediation tracking against the prior session of the same target (docs/session-file.md). A finding matches a prior open item by fingerprint, else (prior files without
 * fingerprints) by title and host. A matched item is `persistent` unless the prior said
 * `in_progress` or `deferred` (a human decision, carried over); its first_seen, note and, when
 * the status did not change, status_changed are the prior's. An unmatched finding is `new`,
 * first seen in this session. Prior open items no longer detected go to remediation_resolved.
 */

export interface RemediationInput {
  findings: readonly StageFinding[];
  /** The prior session file of the same target, or null for the first scan. */
  prior: unknown;
  sessionId: string;
  now: Date;
}

export interface RemediationResult {
  remediation: Remediation[];
  remediation_resolved: Remediation[];
}

const CARRIED: readonly RemediationStatus[] = ['in_progress', 'deferred'];

const statusOf = (v: unknown): RemediationStatus | null =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v) ? (v as RemediationStatus) : null;
const titleKey = (title: unknown, host: unknown) =>
  JSON.stringify([
    typeof title === 'string' ? title.trim() : '',
    typeof host === 'string' ? host.trim().toLowerCase() : '',
  ]);

/** The target a prior session file names (metadata.target, else the older top-level target), or null. */
export function priorTarget(prior: unknown): string | null {
  if (!lenient.isObj(prior)) return null;
  const metadata = lenient.isObj(prior['metadata']) ? prior['metadata'] : {};
  return lenient.str(metadata['target']) ?? lenient.str(prior['target']);
}

export function priorSessionId(prior: unknown): string | null {
  if (!lenient.isObj(prior)) return null;
  const metadata = lenient.isObj(prior['metadata']) ? prior['metadata'] : {};
  return lenient.str(metadata['session_id']) ?? lenient.str(prior['session_id']);
}

export function trackRemediation({ findings, prior, sessionId, now }: RemediationInput): RemediationResult {
  const at = now.toISOString();
  const priorItems = lenient.objs(lenient.isObj(prior) ? prior['remediation'] : undefined);
  const priorId = priorSessionId(prior);
  const byFingerprint = new Map<string, number>();
  const byTitle = new Map<string, number>();
  priorItems.forEach((p, i) => {
    const fp = lenient.str(p['fingerprint']);
    if (fp !== null && !byFingerprint.has(fp)) byFingerprint.set(fp, i);
    // Untitled items match by fingerprint only: an empty title would pair unrelated items.
    if (lenient.str(p['title']) === null) return;
    const key = titleKey(p['title'], p['host']);
    if (!byTitle.has(key)) byTitle.set(key, i);
  });
  const matched = new Set<number>();
  const remediation = findings.map((f): Remediation => {
    const host = hostOf(f);
    let idx = f.fingerprint === undefined ? undefined : byFingerprint.get(f.fingerprint);
    if ((idx === undefined || matched.has(idx)) && lenient.str(f.title) !== null)
      idx = byTitle.get(titleKey(f.title, host));
    if (idx !== undefined && matched.has(idx)) idx = undefined;
    const base: Remediation = {
      title: f.title ?? f.rule_id ?? f.id,
      ...(severityOf(f.severity) === null ? {} : { severity: severityOf(f.severity)! }),
      // The score reads them from the entry, so an exception changed in the portal rescores alike.
      ...(f.kev === true ? { kev: true } : {}),
      ...(typeof f.epss === 'number' ? { epss: f.epss } : {}),
      finding_id: f.id,
      ...(f.fingerprint === undefined ? {} : { fingerprint: f.fingerprint }),
      ...(host === null ? {} : { host }),
    };
    if (idx === undefined)
      return { ...base, status: 'new', status_changed: at, note: '', first_seen: sessionId, prior_status: null };
    matched.add(idx);
    const p = priorItems[idx]!;
    const priorStatus = statusOf(p['status']);
    const status: RemediationStatus =
      priorStatus !== null && CARRIED.includes(priorStatus) ? priorStatus : 'persistent';
    const priorChanged = lenient.str(p['status_changed']);
    return {
      ...base,
      status,
      status_changed: status === priorStatus && priorChanged !== null ? priorChanged : at,
      note: typeof p['note'] === 'string' ? p['note'] : '',
      first_seen: lenient.str(p['first_seen']) ?? priorId ?? sessionId,
      prior_status: priorStatus,
    };
  });
  const remediation_resolved = priorItems
    .filter((_, i) => !matched.has(i))
    .map((p): Remediation => {
      const sev = severityOf(p['severity']);
      const fp = lenient.str(p['fingerprint']);
      const host = lenient.str(p['host']);
      const firstSeen = lenient.str(p['first_seen']) ?? priorId;
      return {
        title: lenient.str(p['title']) ?? '',
        ...(sev === null ? {} : { severity: sev }),
        ...(fp !== null && /^[0-9a-f]{64}$/.test(fp) ? { fingerprint: fp } : {}),
        ...(host === null ? {} : { host }),
        status: 'resolved',
        status_changed: at,
        note: typeof p['note'] === 'string' ? p['note'] : '',
        ...(firstSeen === null ? {} : { first_seen: firstSeen }),
        prior_status: statusOf(p['status']),
        // The decision stays on record with the finding it covered.
        exception_status: null,
        exception_reason: lenient.str(p['exception_reason']),
        exception_approver: lenient.str(p['exception_approver']),
        exception_approved_at: lenient.str(p['exception_approved_at']),
        exception_expiry: lenient.str(p['exception_expiry']),
        exception_expired: false,
      };
    });
  return { remediation, remediation_resolved };
}
