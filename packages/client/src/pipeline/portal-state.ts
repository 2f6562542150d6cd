import {
  dualScoreOf,
  exceptionCountsOf,
  type LatestStateEntry,
  type LatestStateResponse,
  lenient,
  remediationSummaryOf,
  type SessionFile,
} from '@svc/protocol';
import { applyExceptions, type ExceptionRule } from './exceptions.ts';
import { trackRemediation } from './remediation.ts';
import type { Remediation, StageFinding } from './types.ts';

/**
 * The prior state of a scan when a portal is configured (docs/decisions.md, "Issue 22: prior
 * state from the portal"). The portal is the system of record for triage: statuses, notes and
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

const FP = /^[0-9a-f]{64}$/;
const keyOf = (fp: unknown, title: unknown, host: unknown): string[] => {
  const keys: string[] = [];
  if (typeof fp === 'string' && FP.test(fp)) keys.push(`fp:${fp}`);
  if (typeof title === 'string' && title.trim() !== '')
    keys.push(`t:${JSON.stringify([title.trim(), typeof host === 'string' ? host.trim().toLowerCase() : ''])}`);
  return keys;
};
const ms = (v: unknown): number | null => {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t;
};

/** A portal entry as a prior session file's remediation item (the shape trackRemediation reads). */
function itemOf(e: LatestStateEntry): Record<string, unknown> {
  return {
    title: e.title,
    ...(e.severity === null ? {} : { severity: e.severity }),
    ...(e.fingerprint === null ? {} : { fingerprint: e.fingerprint }),
    ...(e.host === null ? {} : { host: e.host }),
    status: e.status ?? 'new',
    ...(e.status_changed === null ? {} : { status_changed: e.status_changed }),
    note: e.note,
    ...(e.first_seen === null ? {} : { first_seen: e.first_seen }),
    exception_status: e.exception_status,
    exception_reason: e.exception_reason,
    exception_approver: e.exception_approver,
    exception_approved_at: e.exception_approved_at,
    exception_expiry: e.exception_expiry,
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
  const decided = new Map<string, LatestStateEntry>();
  for (const e of portal.remediation) {
    const changed = ms(e.status_changed);
    if (changed === null || changed <= localEnd) continue;
    for (const k of keyOf(e.fingerprint, e.title, e.host)) if (!decided.has(k)) decided.set(k, e);
  }
  const items = lenient.objs(local['remediation']).map((item) => {
    const hit = keyOf(item['fingerprint'], item['title'], item['host'])
      .map((k) => decided.get(k))
      .find((e) => e !== undefined);
    if (hit === undefined) return item;
    return {
      ...item,
      status: hit.status ?? item['status'],
      status_changed: hit.status_changed,
      note: hit.note,
      ...(hit.first_seen === null ? {} : { first_seen: hit.first_seen }),
    };
  });
  return { prior: { ...local, remediation: items }, exceptions, source: 'local+portal' };
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
  const tracked = trackRemediation({ findings, prior: merged.prior, sessionId: id, now });
  const remediation = applyExceptions(tracked.remediation, merged.exceptions, day);
  const scores = dualScoreOf(remediation, day);
  const exceptionSummary = { ...exceptionCountsOf(remediation), score_delta: scores.exception_impact.score_delta };
  return {
    ...doc,
    metadata: {
      ...doc.metadata,
      risk_score_operational: scores.risk_score_operational,
      risk_grade_operational: scores.risk_grade_operational,
      remediation_summary: remediationSummaryOf(remediation, tracked.remediation_resolved),
      exception_summary: exceptionSummary,
    },
    summary: { ...doc.summary, ...scores },
    remediation,
    remediation_resolved: tracked.remediation_resolved,
  } as SessionFile;
}
