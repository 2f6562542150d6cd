import {
  type Coverage,
  coversPlace,
  type FindingPlace,
  inferredCoverage,
  isFingerprint,
  lenient,
  severityOf,
} from '@svc/protocol';
import {
  dispositionOf,
  notCheckedEntry,
  type PriorItem,
  placeFields,
  priorItems,
  statusOf,
  statusSourceOf,
} from './prior-items.ts';
import { hostOf, type Remediation, type RemediationStatus, type StageFinding } from './types.ts';

export { priorSessionId, priorTarget } from './prior-items.ts';

/**
 * Remediation tracking against the prior session of the same target (docs/session-file.md,
 * docs/scanner/stages.md). A finding matches a prior open item by fingerprint, else (prior files
 * without fingerprints) by title and host; failing that, a prior resolved item the same way.
 * - A matched open item is `persistent` unless the prior said `in_progress` or `deferred` (a
 *   human decision, carried over); its first_seen, note and, when the status did not change,
 *   status_changed are the prior's.
 * - A matched resolved item is reopened: `persistent`, `reopened_at` the scan's end, its
 *   first_seen and note kept (never `new`: the finding has a history).
 * - An unmatched finding is `new`, first seen in this session.
 * - A prior open item not detected is resolved only when this scan looked where it is and made
 *   its check there (coversPlace: its host answered, its port was scanned over its transport and
 *   coverage.not_checked does not name its rule there); otherwise it stays open in
 *   remediation_not_checked, as it was.
 * False-positive dispositions travel with the item they were set on, like its note.
 */

export interface RemediationInput {
  findings: readonly StageFinding[];
  /** The prior session file of the same target, or null for the first scan. */
  prior: unknown;
  sessionId: string;
  now: Date;
  /** What this scan looked at; by default the hosts its findings name, every port of each. */
  coverage?: Coverage | undefined;
}

export interface RemediationResult {
  remediation: Remediation[];
  remediation_resolved: Remediation[];
  remediation_not_checked: Remediation[];
}

const CARRIED: readonly RemediationStatus[] = ['in_progress', 'deferred'];

const titleKey = (title: unknown, host: unknown) =>
  JSON.stringify([
    typeof title === 'string' ? title.trim() : '',
    typeof host === 'string' ? host.trim().toLowerCase() : '',
  ]);

/** Finds a finding's prior item, each item at most once: by fingerprint, else by title and host. */
class Matcher {
  readonly #byFingerprint = new Map<string, PriorItem>();
  readonly #byTitle = new Map<string, PriorItem>();
  readonly matched = new Set<PriorItem>();

  constructor(items: readonly PriorItem[]) {
    for (const p of items) {
      const fp = lenient.str(p['fingerprint']);
      if (fp !== null && !this.#byFingerprint.has(fp)) this.#byFingerprint.set(fp, p);
      // Untitled items match by fingerprint only: an empty title would pair unrelated items.
      if (lenient.str(p['title']) === null) continue;
      const key = titleKey(p['title'], p['host']);
      if (!this.#byTitle.has(key)) this.#byTitle.set(key, p);
    }
  }

  byFingerprint(f: StageFinding): PriorItem | undefined {
    return this.#take(f.fingerprint === undefined ? undefined : this.#byFingerprint.get(f.fingerprint));
  }

  byTitle(f: StageFinding, host: string | null): PriorItem | undefined {
    return this.#take(lenient.str(f.title) === null ? undefined : this.#byTitle.get(titleKey(f.title, host)));
  }

  #take(p: PriorItem | undefined): PriorItem | undefined {
    if (p === undefined || this.matched.has(p)) return undefined;
    this.matched.add(p);
    return p;
  }
}

export function trackRemediation({ findings, prior, sessionId, now, coverage }: RemediationInput): RemediationResult {
  const at = now.toISOString();
  const items = priorItems(prior);
  const priorId = items.sessionId;
  const open = new Matcher(items.open);
  const resolved = new Matcher(items.resolved);
  const remediation = findings.map((f): Remediation => {
    const host = hostOf(f);
    const base: Remediation = {
      title: f.title ?? f.rule_id ?? f.id,
      ...(severityOf(f.severity) === null ? {} : { severity: severityOf(f.severity)! }),
      // The score reads them from the entry, so an exception changed in the portal rescores alike.
      ...(f.kev === true ? { kev: true } : {}),
      ...(typeof f.epss === 'number' ? { epss: f.epss } : {}),
      finding_id: f.id,
      ...(f.fingerprint === undefined ? {} : { fingerprint: f.fingerprint }),
      // Where it is, so the next scan can tell whether it looked there (coverage).
      ...placeFields({ host, port: f.port ?? null, protocol: f.protocol ?? null }),
    };
    // The fingerprint is the finding's identity: an exact match, open or resolved, beats a title match.
    const p = open.byFingerprint(f);
    const r = p === undefined ? resolved.byFingerprint(f) : undefined;
    const p2 = p ?? (r === undefined ? open.byTitle(f, host) : undefined);
    const r2 = r ?? (p2 === undefined ? resolved.byTitle(f, host) : undefined);
    if (p2 !== undefined) return { ...base, ...carried(p2, at, priorId, sessionId) };
    if (r2 !== undefined) return { ...base, ...reopened(r2, at, priorId) };
    return { ...base, status: 'new', status_changed: at, note: '', first_seen: sessionId, prior_status: null };
  });

  const looked = coverage ?? inferredCoverage({ findings });
  const remediation_resolved: Remediation[] = [];
  const remediation_not_checked: Remediation[] = [];
  for (const p of items.open) {
    if (open.matched.has(p)) continue;
    const place = items.place(p);
    if (coversPlace(looked, place, items.rule(p))) remediation_resolved.push(resolvedEntry(p, place, at, priorId));
    else remediation_not_checked.push(notCheckedEntry(p, place, priorId, items.unseen.has(p) ? null : priorId));
  }
  return { remediation, remediation_resolved, remediation_not_checked };
}

/** A prior open item seen again: its decision, note and history carried. */
function carried(p: PriorItem, at: string, priorId: string | null, sessionId: string): Partial<Remediation> {
  const priorStatus = statusOf(p['status']);
  const keep = priorStatus !== null && CARRIED.includes(priorStatus);
  const status: RemediationStatus = keep ? priorStatus : 'persistent';
  const priorChanged = lenient.str(p['status_changed']);
  return {
    status,
    status_changed: status === priorStatus && priorChanged !== null ? priorChanged : at,
    note: typeof p['note'] === 'string' ? p['note'] : '',
    first_seen: lenient.str(p['first_seen']) ?? priorId ?? sessionId,
    prior_status: priorStatus,
    ...(keep ? statusSourceOf(p) : {}),
    ...dispositionOf(p),
    ...(lenient.str(p['reopened_at']) === null ? {} : { reopened_at: p['reopened_at'] as string }),
  };
}

/** A prior resolved item seen again: reopened now, its history kept. */
function reopened(r: PriorItem, at: string, priorId: string | null): Partial<Remediation> {
  const firstSeen = lenient.str(r['first_seen']) ?? priorId;
  return {
    status: 'persistent',
    status_changed: at,
    note: typeof r['note'] === 'string' ? r['note'] : '',
    ...(firstSeen === null ? {} : { first_seen: firstSeen }),
    prior_status: 'resolved',
    reopened_at: at,
    ...dispositionOf(r),
  };
}

function resolvedEntry(p: PriorItem, place: FindingPlace, at: string, priorId: string | null): Remediation {
  const sev = severityOf(p['severity']);
  const fp = lenient.str(p['fingerprint']);
  const firstSeen = lenient.str(p['first_seen']) ?? priorId;
  return {
    title: lenient.str(p['title']) ?? '',
    ...(sev === null ? {} : { severity: sev }),
    ...(isFingerprint(fp) ? { fingerprint: fp } : {}),
    ...placeFields(place),
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
    ...dispositionOf(p),
    resolved_at: at,
  };
}
