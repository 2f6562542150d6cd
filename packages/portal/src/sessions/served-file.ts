import { Readable } from 'node:stream';
import { lenient, type SessionFileName, type TriageSummary } from '@svc/protocol';
import { fingerprintOfFinding, trackerOf } from '@svc/protocol/node';
import type { AppContext } from '../context.ts';
import { ensureIndexed } from './findings.ts';
import { allFindings, type FindingRecord } from './findings-queries.ts';
import { CONTENT_TYPES } from './files.ts';
import { fileToServe, readSessionDocument } from './open-file.ts';
import type { SessionRow } from './queries.ts';
import { recordTarget } from './records-merge.ts';
import { type RowTriage, rowTriage } from './row-triage.ts';
import { countsOf } from './triage-counts-queries.ts';
import { summaryOfCounts } from './triage-view.ts';

/**
 * The session file as the portal serves it (docs/findings-of-record.md#the-served-file): the
 * stored file is the evidence of the scan, kept as uploaded; what is served states the triage
 * of its findings as it stands now. Its remediation entries come from the findings of record
 * (status, note, first seen, exception, false positive, due date), `.remediation_resolved[]`
 * holds the findings resolved since (and the records this session resolved), the added
 * `.remediation_not_checked[]` the open records it did not look at, and `.summary` and
 * `.metadata` state the numbers of that triage, the ones the listing shows. Downloads of
 * session_results.json, the exports and the share page read it.
 */

const { isObj, objs, arr } = lenient;
type Obj = lenient.Obj;

/** The fields a finding's remediation entry takes from its triage. */
function triageFields(t: RowTriage): Obj {
  const e = t.exception;
  return {
    status: t.status ?? 'new',
    ...(t.priorStatus === null ? {} : { prior_status: t.priorStatus }),
    status_changed: t.statusChanged,
    note: t.note,
    first_seen: t.firstSeen,
    status_source: t.statusSource,
    exception_status: e === null ? null : e.state,
    exception_reason: e?.reason ?? null,
    exception_approver: e?.approver ?? null,
    exception_approved_at: e?.approvedAt ?? null,
    exception_expiry: e?.expiry ?? null,
    exception_expired: e !== null && e.state === 'expired',
    exception_source: e?.source ?? null,
    exception_claimed_approver: e?.claimedApprover ?? null,
    disposition: t.disposition === null ? null : 'false_positive',
    disposition_reason: t.disposition?.reason ?? null,
    disposition_by: t.disposition?.by ?? null,
    disposition_at: t.disposition?.at ?? null,
    last_seen: t.lastSeen,
    resolved_at: t.resolvedAt,
    reopened_at: t.reopenedAt,
    due_date: t.dueDate,
  };
}

/** An entry for a record the file has no entry for (a record the session resolved or did not check). */
function recordEntry(r: FindingRecord): Obj {
  return {
    title: r.title,
    ...(r.severity === null ? {} : { severity: r.severity }),
    fingerprint: r.fingerprint,
    ...(r.host === null ? {} : { host: r.host }),
    ...(r.port === null ? {} : { port: r.port }),
    ...(r.protocol === null ? {} : { protocol: r.protocol }),
  };
}

/** The document served for a stored one (pure): `rows` are the session's index rows with their records. */
export function servedDocument(
  doc: unknown,
  rows: readonly FindingRecord[],
  summary: TriageSummary | null,
  day: string,
): unknown {
  if (!isObj(doc)) return doc;
  const out: Obj = { ...doc };
  const hadRemediation = Array.isArray(doc['remediation']);
  if (hadRemediation) {
    const findings = arr(doc['findings']);
    const track = trackerOf(doc, findings.filter(isObj));
    const open: Obj[] = [];
    const resolved: Obj[] = [];
    const notChecked: Obj[] = [];
    const merged = rows.some((r) => r.change !== null);
    // The file's entries of the session's own findings, placed below by their records.
    const placed = new Set<unknown>();
    for (const r of rows) {
      if (r.in_scan) {
        const f = findings[r.ordinal];
        const tracked = isObj(f) ? track(f, fingerprintOfFinding(f)) : null;
        if (tracked !== null) placed.add(tracked.entry);
        if (r.r_fingerprint === null) {
          // A finding without a record keeps what its file's entry said.
          if (tracked !== null) (tracked.resolved ? resolved : open).push(tracked.entry);
          continue;
        }
        const base: Obj = tracked?.entry ?? {
          title: r.title,
          ...(r.severity === null ? {} : { severity: r.severity }),
          ...(isObj(f) && typeof f['id'] === 'string' ? { finding_id: f['id'] } : {}),
          ...(r.host === null ? {} : { host: r.host }),
        };
        const t = rowTriage(r, day);
        const entry: Obj = {
          ...base,
          ...(r.kev ? { kev: true } : {}),
          ...(r.epss === null ? {} : { epss: r.epss }),
          fingerprint: r.fingerprint,
          ...(r.port === null ? {} : { port: r.port }),
          ...(r.protocol === null ? {} : { protocol: r.protocol }),
          ...triageFields(t),
        };
        (t.status === 'resolved' ? resolved : open).push(entry);
      } else {
        const t = rowTriage(r, day);
        const entry = { ...recordEntry(r), ...triageFields(t) };
        if (r.change === 'resolved') resolved.push({ ...entry, exception_status: null, exception_expired: false });
        else notChecked.push(entry);
      }
    }
    out['remediation'] = open;
    // A session merged into the records lists what it resolved; an older one keeps its file's list of those.
    const priorResolved = objs(doc['remediation_resolved']).filter((e) => !placed.has(e));
    out['remediation_resolved'] = merged ? resolved : [...resolved, ...priorResolved];
    if (notChecked.length > 0 || merged) out['remediation_not_checked'] = notChecked;
  }
  if (summary !== null) {
    const summaryBlock = isObj(doc['summary']) ? doc['summary'] : {};
    out['summary'] = { ...summaryBlock, ...summary.scores };
    const metadata = isObj(doc['metadata']) ? doc['metadata'] : {};
    out['metadata'] = {
      ...metadata,
      ...('risk_score' in metadata
        ? { risk_score: summary.scores.risk_score, risk_grade: summary.scores.risk_grade }
        : {}),
      risk_score_operational: summary.scores.risk_score_operational,
      risk_grade_operational: summary.scores.risk_grade_operational,
      ...(hadRemediation ? { remediation_summary: summary.remediation_summary } : {}),
      exception_summary: summary.exception_summary,
      disposition_summary: summary.disposition_summary,
      triage_as_of: day,
    };
  }
  return out;
}

/** The stored file of a session with its current triage (its index is built first when missing). */
export async function readServedDocument(ctx: AppContext, session: SessionRow): Promise<unknown> {
  const { doc } = await readSessionDocument(ctx, session);
  await ensureIndexed(ctx, session);
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const day = ctx.now().toISOString().slice(0, 10);
  const [rows, counts] = await Promise.all([
    allFindings(ctx.db, ref, recordTarget(session.target)),
    countsOf(ctx.db, [ref]),
  ]);
  return servedDocument(doc, rows, counts.length === 0 ? null : summaryOfCounts(counts, day), day);
}

/**
 * A stored file to serve: session_results.json with its current triage (built in memory: it
 * is at most an upload's size) unless `asUploaded`, any other file streamed as stored.
 */
export async function sessionFileToServe(
  ctx: AppContext,
  session: SessionRow,
  file: SessionFileName,
  asUploaded = false,
): Promise<{ body: Readable; size: number; contentType: string }> {
  if (file !== 'session_results.json' || asUploaded) {
    const opened = await fileToServe(ctx, session, file);
    return { body: opened.stream, size: opened.size, contentType: opened.contentType };
  }
  // A missing file answers as any missing file does (404).
  if (session.files[file] === undefined) await fileToServe(ctx, session, file);
  const body = Buffer.from(`${JSON.stringify(await readServedDocument(ctx, session), null, 2)}\n`, 'utf8');
  return { body: Readable.from([body]), size: body.length, contentType: CONTENT_TYPES[file] };
}
