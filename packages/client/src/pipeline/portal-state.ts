import {
  factsOfEntries,
  isFingerprint,
  type LatestStateEntry,
  type LatestStateResponse,
  lenient,
  type SessionFile,
  sessionCoverage,
  triageSummary,
} from '@svc/protocol';
import { applyExceptions, type ExceptionRule } from './exceptions.ts';
import { trackRemediation } from './remediation.ts';
import type { Remediation, StageFinding } from './types.ts';

/**
 * The prior state of a scan when a portal is configured
 * (docs/decisions.md#prior-state-from-the-portal). The portal is the system of record for triage: statuses, notes and
 * exceptions set in the console live in its stored copy of the latest session. Pure: the
 * caller fetched the portal's state and read the local prior session.
 *
 * Which prior the remediation stage compares against:
 * - the portal's latest session when there is no local prior, when it is the local prior
 *   itself (same session id: the stored copy plus the triage since), or when it was scanned
 *   later than the local prior (another machine scanned the target since);
 * - otherwise the local prior (the portal's copy is older, e.g. the last upload failed), with
 *   each of its items taking the portal's status, note, status_changed and first_seen where the
 *   portal's item changed after the local prior session ended (a decision made in the portal
 *   after it).
 * Exceptions: the portal's accepted or expired ones join the local `--exceptions` rules; for one
 * finding the rule approved later wins (no approval time counts as oldest; a tie keeps the
 * local file's). Offline, the exceptions recorded in the local prior session take the portal's
 * place.
 */

export interface PriorMerge {
  prior: unknown;
  exceptions: ExceptionRule[];
  /** Where the prior came from, for pipeline.log. */
  source: 'local' | 'portal' | 'local+portal';
}

const keyOf = (fp: unknown, title: unknown, host: unknown): string[] => {
  const keys: string[] = [];
  if (isFingerprint(fp)) keys.push(`fp:${fp}`);
  if (typeof title === 'string' && title.trim() !== '')
    keys.push(`t:${JSON.stringify([title.trim(), typeof host === 'string' ? host.trim().toLowerCase() : ''])}`);
  return keys;
};
const ms = (v: unknown): number | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
};

/** The fields of an entry that are set (not absent, not null), as they are. */
function setFields(e: LatestStateEntry, keys: readonly (keyof LatestStateEntry)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (e[k] !== undefined && e[k] !== null) out[k] = e[k];
  return out;
}

const DISPOSITION_KEYS = ['disposition', 'disposition_reason', 'disposition_by', 'disposition_at'] as const;

/**
 * A portal entry as a prior session file's remediation item (the shape trackRemediation reads).
 * `port` is always set (null: host level), so the item's place is its own: the portal's
 * records hold items its latest session did not report, whose findings no file holds.
 */
function itemOf(e: LatestStateEntry): Record<string, unknown> {
  return {
    title: e.title,
    ...(e.severity === null ? {} : { severity: e.severity }),
    ...(e.fingerprint === null ? {} : { fingerprint: e.fingerprint }),
    ...(e.host === null ? {} : { host: e.host }),
    port: e.port,
    ...setFields(e, ['protocol']),
    status: e.status ?? 'new',
    ...(e.status_changed === null ? {} : { status_changed: e.status_changed }),
    note: e.note,
    ...(e.first_seen === null ? {} : { first_seen: e.first_seen }),
    ...setFields(e, ['status_source']),
    exception_status: e.exception_status,
    exception_reason: e.exception_reason,
    exception_approver: e.exception_approver,
    exception_approved_at: e.exception_approved_at,
    exception_expiry: e.exception_expiry,
    ...setFields(e, ['exception_source', 'exception_claimed_approver']),
    ...setFields(e, DISPOSITION_KEYS),
    ...setFields(e, ['last_seen', 'resolved_at', 'reopened_at']),
  };
}

/** The portal's state as a prior session file. */
function portalDoc(state: LatestStateResponse): Record<string, unknown> {
  return {
    metadata: {
      session_id: state.session_id,
      target: state.target,
      ...(state.scanned_at === null ? {} : { finished_at: state.scanned_at }),
    },
    remediation: state.remediation.map(itemOf),
    remediation_resolved: state.remediation_resolved.map(itemOf),
  };
}

/** The portal's exceptions as rules of the exceptions stage. */
export function portalExceptionRules(state: LatestStateResponse): ExceptionRule[] {
  return state.remediation.flatMap((e): ExceptionRule[] =>
    e.exception_status === null || e.exception_reason === null || e.exception_approver === null
      ? []
      : [
          {
            fingerprint: e.fingerprint,
            title: e.fingerprint === null ? e.title : null,
            host: e.fingerprint === null ? e.host : null,
            reason: e.exception_reason,
            approver: e.exception_approver,
            approved_at: e.exception_approved_at,
            expiry: e.exception_expiry,
            source: e.exception_source ?? null,
            claimed_approver: e.exception_claimed_approver ?? null,
          },
        ],
  );
}

/** Local rules and portal rules for the same finding: the later approval wins. */
export function mergeExceptionRules(
  local: readonly ExceptionRule[],
  portal: readonly ExceptionRule[],
): ExceptionRule[] {
  const out: ExceptionRule[] = [...local];
  const at = (r: ExceptionRule) => ms(r.approved_at) ?? Number.NEGATIVE_INFINITY;
  for (const p of portal) {
    const pKeys = new Set(keyOf(p.fingerprint, p.title, p.host));
    const i = out.findIndex((l) => keyOf(l.fingerprint, l.title, l.host).some((k) => pKeys.has(k)));
    if (i === -1) out.push(p);
    else if (at(p) > at(out[i]!)) out[i] = p;
  }
  return out;
}

export function mergePriorState(
  localPrior: unknown,
  portal: LatestStateResponse | null,
  localExceptions: readonly ExceptionRule[],
): PriorMerge {
  if (portal === null) {
    // Offline: the exceptions the local prior recorded (the portal's, as of that scan) still hold.
    const recorded = lenient.isObj(localPrior)
      ? recordedRules(lenient.objs(localPrior['remediation']) as Remediation[])
      : [];
    return { prior: localPrior, exceptions: mergeExceptionRules(localExceptions, recorded), source: 'local' };
  }
  const exceptions = mergeExceptionRules(localExceptions, portalExceptionRules(portal));
  const local = lenient.isObj(localPrior) ? localPrior : null;
  const localMeta = local !== null && lenient.isObj(local['metadata']) ? local['metadata'] : {};
  const localId = lenient.str(localMeta['session_id']) ?? (local === null ? null : lenient.str(local['session_id']));
  const localEnd = ms(localMeta['finished_at']);
  const portalEnd = ms(portal.scanned_at) ?? ms(portal.uploaded_at);
  if (
    local === null ||
    localId === portal.session_id ||
    localEnd === null ||
    (portalEnd !== null && portalEnd > localEnd)
  )
    return { prior: portalDoc(portal), exceptions, source: 'portal' };

  // The local prior is newer than the portal's copy: the portal's decisions made after it still win.
  const decided = indexed(portal.remediation.filter((e) => (ms(e.status_changed) ?? localEnd) > localEnd));
  // Dispositions are set in the portal only: its word on an item it holds is the current one.
  const known = indexed([...portal.remediation, ...portal.remediation_resolved]);
  const find = (index: Map<string, LatestStateEntry>, item: Record<string, unknown>) =>
    keyOf(item['fingerprint'], item['title'], item['host'])
      .map((k) => index.get(k))
      .find((e) => e !== undefined);
  const withPortal = (item: Record<string, unknown>) => {
    const entry = find(known, item);
    const hit = find(decided, item);
    if (entry === undefined && hit === undefined) return item;
    const out: Record<string, unknown> = { ...item };
    if (entry !== undefined) {
      for (const k of DISPOSITION_KEYS) delete out[k];
      Object.assign(out, setFields(entry, DISPOSITION_KEYS));
    }
    if (hit === undefined) return out;
    return {
      ...out,
      status: hit.status ?? item['status'],
      status_changed: hit.status_changed,
      note: hit.note,
      ...(hit.first_seen === null ? {} : { first_seen: hit.first_seen }),
      ...setFields(hit, ['status_source']),
    };
  };
  const prior: Record<string, unknown> = {
    ...local,
    remediation: lenient.objs(local['remediation']).map(withPortal),
    ...(Array.isArray(local['remediation_not_checked'])
      ? { remediation_not_checked: lenient.objs(local['remediation_not_checked']).map(withPortal) }
      : {}),
  };
  return { prior, exceptions, source: 'local+portal' };
}

/** Portal entries by each key they match on, the first entry per key. */
function indexed(entries: readonly LatestStateEntry[]): Map<string, LatestStateEntry> {
  const index = new Map<string, LatestStateEntry>();
  for (const e of entries) for (const k of keyOf(e.fingerprint, e.title, e.host)) if (!index.has(k)) index.set(k, e);
  return index;
}

/** The exceptions a finished document records on its open items, as rules (for re-applying them beside the portal's). */
function recordedRules(items: readonly Remediation[]): ExceptionRule[] {
  return items.flatMap((i): ExceptionRule[] =>
    (i.exception_status !== 'accepted' && i.exception_status !== 'expired') ||
    typeof i.exception_reason !== 'string' ||
    typeof i.exception_approver !== 'string'
      ? []
      : [
          {
            fingerprint: i.fingerprint ?? null,
            title: i.fingerprint === undefined ? (i.title ?? null) : null,
            host: i.fingerprint === undefined ? (i.host ?? null) : null,
            reason: i.exception_reason,
            approver: i.exception_approver,
            approved_at: i.exception_approved_at ?? null,
            expiry: i.exception_expiry ?? null,
            source: i.exception_source ?? null,
            claimed_approver: i.exception_claimed_approver ?? null,
          },
        ],
  );
}

/**
 * `svc upload` of a session directory written before the portal's latest decisions: the
 * remediation stage and the scores it feeds run again on the document's own findings, from
 * the merged prior (mergePriorState) and the document's exceptions beside the portal's. The
 * scan's end stays the time of every automatic change. Null when the document has no
 * remediation (unlicensed) or no end time.
 */
export function reapplyPriorState(
  doc: SessionFile,
  localPrior: unknown,
  portal: LatestStateResponse,
): SessionFile | null {
  const end = lenient.str(doc.metadata?.finished_at);
  const id = lenient.str(doc.metadata?.session_id);
  if (!Array.isArray(doc.remediation) || end === null || id === null || Number.isNaN(Date.parse(end))) return null;
  const now = new Date(end);
  const day = now.toISOString().slice(0, 10);
  const findings = lenient.objs(doc.findings) as StageFinding[];
  const merged = mergePriorState(localPrior, portal, recordedRules(doc.remediation as Remediation[]));
  // What the document's scan looked at: its coverage block, else what its findings and topology name.
  const coverage = sessionCoverage(doc);
  const tracked = trackRemediation({ findings, prior: merged.prior, sessionId: id, now, coverage });
  const remediation = applyExceptions(tracked.remediation, merged.exceptions, day);
  // The same rule as the scan's (scoring.ts) and the portal's: the protocol's triage.
  const t = triageSummary(factsOfEntries(remediation, tracked.remediation_resolved), day);
  const { remediation_not_checked: _dropped, ...rest } = doc;
  return {
    ...rest,
    metadata: {
      ...doc.metadata,
      risk_score_operational: t.scores.risk_score_operational,
      risk_grade_operational: t.scores.risk_grade_operational,
      remediation_summary: t.remediation_summary,
      exception_summary: t.exception_summary,
      disposition_summary: t.disposition_summary,
    },
    summary: { ...doc.summary, ...t.scores },
    remediation,
    remediation_resolved: tracked.remediation_resolved,
    ...(tracked.remediation_not_checked.length === 0
      ? {}
      : { remediation_not_checked: tracked.remediation_not_checked }),
  } as SessionFile;
}
