import { type Coverage, coversPlace, type DueDays, type FindingChange, FINDING_CHANGES } from '@svc/protocol';
import { applyClaims, type Uploader } from './claims.ts';
import { type Actor, refreshDueDate, setStatus } from './decide.ts';
import type { EvidenceFinding } from './evidence.ts';
import {
  type HistoryLine,
  NO_DECISIONS,
  type RecordRow,
  SEEN_IN_KEPT,
  sessionIdTime,
  sameTriage,
  severityKeyOf,
  type TriageChange,
  triageKeyOf,
} from './model.ts';

/**
 * An upload merged into the findings of record of its target (pure; docs/findings-of-record.md#merge):
 * - a finding the records do not know becomes a record (`new`, or what the file's own history says);
 * - a finding seen again: `new` becomes `persistent`, a resolved one is reopened (`persistent`,
 *   reopened_at, its history kept), a decision (in_progress, deferred) stays;
 * - an open record the session did not report is resolved only when the session looked where
 *   it is and made the record's check there (coverage.ts, coversPlace with its rule); otherwise
 *   it stays as it is, not checked by this session;
 * - then the file's claims, weighed by who uploaded it (claims.ts).
 * A session scanned before the latest one that observed a record (an upload that arrives late)
 * adds its sighting but changes no status. Re-uploading a session merges it again: for the
 * same file nothing changes.
 */

export interface MergeSession {
  sessionId: string;
  scannedAt: Date;
  now: Date;
  coverage: Coverage;
  uploader: Uploader;
  dueDays: DueDays;
  /** The target's latest merged session: a late upload's new finding that it looked for and did not find is resolved by it. */
  latest?: { sessionId: string; scannedAt: Date; coverage: Coverage } | null;
}

export interface MergeResult {
  /** Every record to write: new ones and changed ones. */
  rows: RecordRow[];
  /** Existing records whose triage (status, false positive, exception, due date) changed: other sessions count them again. */
  changed: TriageChange[];
  history: HistoryLine[];
  /** What the session did to each finding it reported. */
  seen: Map<string, FindingChange | null>;
  /** Records the session did not report: resolved by it, or not checked. */
  missing: { record: RecordRow; change: 'resolved' | 'not_checked' }[];
  counts: Record<FindingChange, number>;
}

function newRecord(clientId: string, target: string, f: EvidenceFinding, s: MergeSession): RecordRow {
  const first =
    f.claims.firstSeen !== undefined && f.claims.firstSeen <= s.sessionId ? f.claims.firstSeen : s.sessionId;
  const firstAt = first === s.sessionId ? s.scannedAt : (sessionIdTime(first) ?? s.scannedAt);
  return {
    client_id: clientId,
    target,
    fingerprint: f.key,
    title: f.title,
    severity: f.severity,
    severity_key: severityKeyOf(f.severity),
    rule_id: f.rule_id,
    host: f.host,
    port: f.port,
    protocol: f.protocol,
    cve_ids: f.cve_ids,
    kev: f.kev,
    epss: f.epss,
    status: f.claims.persistent === true && first !== s.sessionId ? 'persistent' : 'new',
    status_changed: s.scannedAt,
    status_source: 'scan',
    status_by: s.uploader.actor,
    prior_status: null,
    ...NO_DECISIONS,
    first_seen: first,
    first_seen_at: firstAt,
    last_seen: s.sessionId,
    last_seen_at: s.scannedAt,
    last_observed_at: s.scannedAt,
    seen_in: [s.sessionId],
    seen_count: 1,
    resolved_at: null,
    resolved_in: null,
    reopened_at: null,
    not_checked_in: null,
    due_date: null,
    claims: {},
    updated_at: s.now,
  };
}

/** The evidence of the finding as this session reported it: what it is called, how severe, where. */
function describe(r: RecordRow, f: EvidenceFinding): void {
  r.title = f.title;
  r.severity = f.severity;
  r.severity_key = severityKeyOf(f.severity);
  r.rule_id = f.rule_id;
  r.host = f.host;
  r.port = f.port;
  r.protocol = f.protocol;
  r.cve_ids = f.cve_ids;
  r.kev = f.kev;
  r.epss = f.epss;
}

function addSighting(r: RecordRow, s: MergeSession): void {
  if (r.seen_in.includes(s.sessionId)) return;
  r.seen_in = [s.sessionId, ...r.seen_in].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)).slice(0, SEEN_IN_KEPT);
  r.seen_count += 1;
}

export function mergeUpload(
  clientId: string,
  target: string,
  existing: ReadonlyMap<string, RecordRow>,
  findings: readonly EvidenceFinding[],
  s: MergeSession,
): MergeResult {
  const history: HistoryLine[] = [];
  const rows: RecordRow[] = [];
  const changed: TriageChange[] = [];
  const seen = new Map<string, FindingChange | null>();
  const missing: MergeResult['missing'] = [];
  const counts = Object.fromEntries(FINDING_CHANGES.map((c) => [c, 0])) as Record<FindingChange, number>;
  const scan: Actor = { actor: s.uploader.actor, source: 'scan', at: s.scannedAt, sessionId: s.sessionId };
  const upload: Actor = { ...scan, source: 'upload' };

  for (const f of findings) {
    const before = existing.get(f.key);
    if (before === undefined) {
      const r = newRecord(clientId, target, f, s);
      applyClaims(r, f.claims, s.uploader, upload, history);
      const latest = s.latest;
      if (
        latest !== null &&
        latest !== undefined &&
        s.scannedAt.getTime() < latest.scannedAt.getTime() &&
        coversPlace(latest.coverage, { host: r.host, port: r.port, protocol: r.protocol }, r.rule_id)
      ) {
        setStatus(
          r,
          'resolved',
          { ...scan, at: latest.scannedAt, sessionId: latest.sessionId },
          history,
          'not found by a later session that looked where it was',
        );
        r.last_observed_at = latest.scannedAt;
      }
      refreshDueDate(r, s.dueDays);
      rows.push(r);
      const change: FindingChange = r.first_seen === s.sessionId ? 'new' : 'persistent';
      seen.set(f.key, change);
      counts[change]++;
      continue;
    }
    const r: RecordRow = { ...before, seen_in: [...before.seen_in] };
    // A claim is weighed against the decision before this upload, not the merge's own step.
    const baseline = { source: before.status_source, by: before.status_by, at: before.status_changed };
    addSighting(r, s);
    let change: FindingChange | null = null;
    if (s.scannedAt.getTime() >= r.last_observed_at.getTime()) {
      describe(r, f);
      r.last_seen = s.sessionId;
      r.last_seen_at = s.scannedAt;
      r.last_observed_at = s.scannedAt;
      r.not_checked_in = null;
      if (r.status === 'resolved') {
        setStatus(r, 'persistent', scan, history, 'reopened: seen again');
        r.reopened_at = s.scannedAt;
        change = 'reopened';
      } else {
        if (r.status === 'new' && r.first_seen !== s.sessionId) setStatus(r, 'persistent', scan, history);
        change = r.first_seen === s.sessionId ? 'new' : 'persistent';
      }
      applyClaims(r, f.claims, s.uploader, upload, history, baseline);
    } else if (s.sessionId < r.first_seen) {
      // A late upload of an earlier scan: it only moves first seen back.
      r.first_seen = s.sessionId;
      r.first_seen_at = s.scannedAt;
    }
    if (change !== null) counts[change]++;
    seen.set(f.key, change);
    refreshDueDate(r, s.dueDays);
    r.updated_at = s.now;
    rows.push(r);
    const a = triageKeyOf(before);
    const b = triageKeyOf(r);
    if (!sameTriage(a, b)) changed.push({ fingerprint: r.fingerprint, before: a, after: b });
  }

  for (const before of existing.values()) {
    if (seen.has(before.fingerprint) || before.status === 'resolved') continue;
    if (s.scannedAt.getTime() < before.last_observed_at.getTime()) continue;
    const r: RecordRow = { ...before };
    r.updated_at = s.now;
    if (coversPlace(s.coverage, { host: r.host, port: r.port, protocol: r.protocol }, r.rule_id)) {
      setStatus(r, 'resolved', scan, history, 'not found where the session looked');
      r.last_observed_at = s.scannedAt;
      r.not_checked_in = null;
      missing.push({ record: r, change: 'resolved' });
      counts.resolved++;
      changed.push({ fingerprint: r.fingerprint, before: triageKeyOf(before), after: triageKeyOf(r) });
    } else {
      r.not_checked_in = s.sessionId;
      missing.push({ record: r, change: 'not_checked' });
      counts.not_checked++;
    }
    rows.push(r);
  }
  return { rows, changed, history, seen, missing, counts };
}
