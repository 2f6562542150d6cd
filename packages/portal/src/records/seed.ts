import {
  type DueDays,
  isFingerprint,
  lenient,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  severityOf,
} from '@svc/protocol';
import { sha256Hex } from '@svc/protocol/node';
import { type Actor, noteUnappliedClaim, refreshDueDate, setException, setFalsePositive } from './decide.ts';
import { evidenceOf } from './evidence.ts';
import { mergeUpload } from './merge.ts';
import { type HistoryLine, NO_DECISIONS, type RecordRow, sessionIdTime, severityKeyOf } from './model.ts';

/**
 * Today's triage read into records (pure; docs/findings-of-record.md#migration). Before the
 * records, a target's triage lived in the remediation entries of its newest stored session
 * (remediation updates rewrote that file). The newest session of each target wins: its findings
 * become records with the statuses, notes, first-seen sessions, exceptions and dispositions its
 * entries state, and the entries of `.remediation_resolved[]` become resolved records.
 * Decisions read this way have the source `migration` and rank like a person's: no upload
 * overrides them. An exception the file holds counts only when the key that uploaded the
 * session could set one (its tier has remediation:update, or the legacy key); otherwise it is
 * kept as a claim that was not applied, as it would be for an upload today.
 */

export interface SeedSession {
  sessionId: string;
  scannedAt: Date;
  now: Date;
  /** The uploading key may set exceptions (remediation:update), the actor audit names it by. */
  uploader: { actor: string; mayDecide: boolean };
  dueDays: DueDays;
}

const { isObj, str, objs } = lenient;
const isStatus = (v: unknown): v is RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v);
const instantOf = (v: unknown): Date | null => {
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Number.isNaN(t) ? null : new Date(t);
};

/** Resolved entries (no finding in the file) keyed like recordKeyOf keys a finding. */
function resolvedKey(e: lenient.Obj): string | null {
  const fp = str(e['fingerprint']);
  if (isFingerprint(fp)) return fp;
  const title = str(e['title'])?.trim();
  if (!title) return null;
  return sha256Hex(JSON.stringify(['svc-finding-title-v1', title, (str(e['host']) ?? '').trim().toLowerCase()]));
}

export function seedFromDocument(
  clientId: string,
  target: string,
  doc: unknown,
  s: SeedSession,
): { rows: RecordRow[]; history: HistoryLine[] } {
  const root = isObj(doc) ? doc : {};
  const evidence = evidenceOf(doc);
  // The findings, as a first upload would make them; their entries' decisions are read below, as migrated ones.
  const base = mergeUpload(
    clientId,
    target,
    new Map(),
    evidence.map((f) => {
      const { firstSeen, persistent } = f.claims;
      return {
        ...f,
        claims: {
          ...(firstSeen === undefined ? {} : { firstSeen }),
          ...(persistent === undefined ? {} : { persistent }),
        },
      };
    }),
    {
      ...s,
      coverage: {
        hosts: new Set(),
        ports: {},
        profile: null,
        tools: [],
        source: null,
        inferred: true,
        notChecked: new Map(),
      },
      uploader: { actor: s.uploader.actor, mayDecide: false },
    },
  );
  const byKey = new Map(base.rows.map((r) => [r.fingerprint, r]));
  const history: HistoryLine[] = [];
  const migration: Actor = { actor: 'migration', source: 'migration', at: s.now, sessionId: s.sessionId };
  for (const f of evidence) {
    const r = byKey.get(f.key);
    if (r === undefined) continue;
    const c = f.claims;
    if (c.status !== undefined) {
      r.status = c.status.value;
      r.status_changed = c.status.at ?? s.scannedAt;
      r.status_source = 'migration';
      r.status_by = null;
    }
    if (c.note !== undefined) {
      r.note = c.note;
      r.note_source = 'migration';
      r.note_at = s.now;
    }
    if (c.exception !== undefined) {
      const e = c.exception;
      if (s.uploader.mayDecide)
        setException(
          r,
          {
            reason: e.reason,
            expiry: e.expiry,
            approver: e.approver ?? s.uploader.actor,
            approvedAt: e.approvedAt ?? s.scannedAt,
            claimedApprover: null,
          },
          migration,
          history,
        );
      else
        noteUnappliedClaim(
          r,
          'exception',
          `${e.reason} (until ${e.expiry ?? 'no expiry'}, approver named: ${e.approver ?? 'none'})`,
          'the key that uploaded it has no remediation:update permission',
          migration,
          history,
        );
    }
    if (c.disposition !== undefined) setFalsePositive(r, c.disposition.reason, migration, history);
  }
  // A finding of the file whose entry sits in remediation_resolved was resolved in the portal.
  for (const e of objs(root['remediation_resolved'])) {
    const key = resolvedKey(e);
    if (key === null) continue;
    const present = byKey.get(key);
    const first = str(e['first_seen']);
    const firstSeen = first !== null && /^[a-zA-Z0-9_-]+$/.test(first) ? first : s.sessionId;
    const changedAt = instantOf(e['status_changed']) ?? s.scannedAt;
    if (present !== undefined) {
      // Resolved in the portal after the scan: when the entry says, since when it says.
      present.status = 'resolved';
      present.status_source = 'migration';
      present.status_changed = changedAt;
      present.resolved_at = changedAt;
      if (firstSeen < present.first_seen) {
        present.first_seen = firstSeen;
        present.first_seen_at = sessionIdTime(firstSeen) ?? present.first_seen_at;
      }
      const note = str(e['note']);
      if (note !== null && note !== '') {
        present.note = note;
        present.note_source = 'migration';
      }
      continue;
    }
    const severity = severityOf(e['severity']);
    byKey.set(key, {
      ...emptyRecord(clientId, target, key, s),
      title: str(e['title']) ?? '',
      severity,
      severity_key: severityKeyOf(severity),
      host: str(e['host']),
      status: 'resolved',
      status_changed: changedAt,
      prior_status: isStatus(e['prior_status']) ? e['prior_status'] : null,
      note: str(e['note']) ?? '',
      note_source: str(e['note']) ? 'migration' : null,
      first_seen: firstSeen,
      first_seen_at: sessionIdTime(firstSeen) ?? s.scannedAt,
      resolved_at: s.scannedAt,
      resolved_in: s.sessionId,
    });
  }
  const rows = [...byKey.values()];
  for (const r of rows) refreshDueDate(r, s.dueDays);
  return { rows, history };
}

function emptyRecord(clientId: string, target: string, key: string, s: SeedSession): RecordRow {
  return {
    client_id: clientId,
    target,
    fingerprint: key,
    title: '',
    severity: null,
    severity_key: -1,
    rule_id: null,
    host: null,
    port: null,
    protocol: null,
    cve_ids: [],
    kev: false,
    epss: null,
    status: 'resolved',
    status_changed: s.scannedAt,
    status_source: 'migration',
    status_by: null,
    prior_status: null,
    ...NO_DECISIONS,
    first_seen: s.sessionId,
    first_seen_at: s.scannedAt,
    last_seen: s.sessionId,
    last_seen_at: s.scannedAt,
    last_observed_at: s.scannedAt,
    seen_in: [],
    seen_count: 0,
    resolved_at: s.scannedAt,
    resolved_in: s.sessionId,
    reopened_at: null,
    not_checked_in: null,
    due_date: null,
    claims: {},
    updated_at: s.now,
  };
}
