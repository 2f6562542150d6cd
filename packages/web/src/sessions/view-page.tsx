import { type SessionFile, type SessionView, sessionHref } from '@svc/protocol';
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useMemo, useState } from 'preact/hooks';
import {
  deleteSession,
  getBenchmark,
  getSession,
  listSessions,
  type SessionDetail,
  type SessionRef,
} from '../api/sessions.ts';
import { ApiError } from '../api/errors.ts';
import { useMay } from '../auth/access.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { formatCount, formatDate, formatScore, label, NO_VALUE } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { SeverityBreakdown } from '../ui/severity.tsx';
import { Benchmark } from './benchmark.tsx';
import { Compliance, Orc964 } from './compliance.tsx';
import { DueDaysSettings } from './due-days.tsx';
import { Downloads, Exports, Reports } from './files.tsx';
import { ShareLink } from './share-link.tsx';
import { Exceptions, Findings } from './findings.tsx';
import { getSessionBlocks } from '../api/session-findings.ts';
import { CHANGE_FILTERS, type ChangeFilter } from './findings-model.ts';
import { ReviewStatus } from './status.tsx';
import { Topology } from './topology.tsx';
import { previousScanOf, scanTimeOf } from './scan-time.ts';
import { Trend } from './trend.tsx';
import { type Loaded, useLoad } from '../ui/use-load.ts';

function Section(props: { id: string; title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-labelledby={`${props.id}-h`}>
      <h2 id={`${props.id}-h`}>{props.title}</h2>
      {props.children}
    </section>
  );
}

function Loading<T>(props: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (props.loaded.state === 'loading') return <p aria-busy="true">Loading…</p>;
  if (props.loaded.state === 'failed') return <ErrorMessage error={props.loaded.error} onRetry={props.loaded.retry} />;
  return <>{props.children(props.loaded.value)}</>;
}

/** docs/api.md#ids-are-per-client: the id names sessions of several clients the user may see; the portal's message and one link per client. */
function clientChoicesOf(loaded: Loaded<unknown>): (string | null)[] | null {
  if (loaded.state !== 'failed' || !(loaded.error instanceof ApiError) || loaded.error.status !== 409) return null;
  const ids = (loaded.error.body as { client_ids?: unknown } | null)?.client_ids;
  return Array.isArray(ids) ? ids.filter((c): c is string | null => c === null || typeof c === 'string') : null;
}

function Scores(props: { session: SessionView }) {
  const s = props.session;
  const op = s.exception_summary;
  return (
    <div class="scores">
      <div class="score">
        <span class="score-label">Actual risk</span>
        <span class={`grade grade-${s.risk_grade ?? 'none'}`}>{s.risk_grade ?? NO_VALUE}</span>
        <span>{formatScore(s.risk_score)} / 100</span>
      </div>
      <div class="score">
        <span class="score-label">Operational risk</span>
        <span class={`grade grade-${op.risk_grade_operational ?? 'none'}`}>
          {op.risk_grade_operational ?? NO_VALUE}
        </span>
        <span>{formatScore(op.risk_score_operational)} / 100</span>
      </div>
      <dl class="facts">
        <dt>Client</dt>
        <dd>{s.client ?? s.client_id ?? NO_VALUE}</dd>
        <dt>Target</dt>
        <dd>{s.target ?? NO_VALUE}</dd>
        <dt>Status</dt>
        <dd>{label(s.status)}</dd>
        <dt>Hosts</dt>
        <dd>{formatCount(s.total_hosts)}</dd>
        <dt>Findings</dt>
        <dd>{formatCount(s.total_findings)}</dd>
        <dt>Exceptions</dt>
        <dd>
          {op.by_status.accepted} accepted, {op.by_status.expired} expired
          {op.score_delta !== 0 ? ` (−${formatScore(op.score_delta)} points)` : ''}
        </dd>
        <dt>False positives</dt>
        <dd data-false-positives>{s.disposition_summary?.false_positive ?? 0}</dd>
        <dt>Uploaded</dt>
        <dd>{formatDate(s.uploaded_at)}</dd>
        <dt>Scanner</dt>
        <dd>{s.tool_version ?? NO_VALUE}</dd>
      </dl>
    </div>
  );
}

/** The session view at `/collect/?session=<id>` (command results link here). */
export function SessionViewPage() {
  const { path, query, route } = useLocation();
  const ref: SessionRef = { session: query['session'] ?? '', clientId: query['client_id'] };
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  // A remediation or exception change reloads the scores and exceptions in place (no remount).
  const [triage, setTriage] = useState(0);
  // New due-date settings date the findings again: the table reloads.
  const [dated, setDated] = useState(0);
  const mayTriage = useMay('remediation:update');
  const key = [ref.session, ref.clientId];
  const change = CHANGE_FILTERS.find((c) => c === query['change']);
  // The change filter lives in the address: a filtered view can be linked to and gone back from.
  const showChange = (next: ChangeFilter | undefined) => {
    const q = new URLSearchParams(Object.entries(query).filter(([k]) => k !== 'change'));
    if (next !== undefined) q.set('change', next);
    route(`${path}?${q.toString()}`);
  };
  const valid = ref.session !== '';

  const detail = useLoad(valid ? () => getSession(ref) : null, [...key, version, triage]);
  // Findings come a page at a time from the portal's index; the whole session file is never downloaded here.
  const blocks = useLoad(valid ? () => getSessionBlocks(ref) : null, [...key]);
  const benchmark = useLoad(valid ? () => getBenchmark(ref) : null, [...key]);
  const session = detail.state === 'done' ? detail.value.session : null;
  // The findings of record are the session's client's, of its target (bulk changes name both).
  const scopeKey = session === null ? null : JSON.stringify([session.client_id ?? '', (session.target ?? '').trim()]);
  const scope = useMemo(() => {
    if (scopeKey === null) return null;
    const [clientId, target] = JSON.parse(scopeKey) as [string, string];
    return { clientId, target };
  }, [scopeKey]);
  const trend = useLoad(
    session === null
      ? null
      : () =>
          listSessions({ client_id: session.client_id ?? '', target: session.target ?? undefined, limit: 200 }).then(
            (r) => r.sessions.filter((s) => s.target === session.target && s.client_id === session.client_id),
          ),
    [session?.client_id, session?.target, session?.session_id],
  );

  // The scan before this one, from the trend's sessions of the target (the changes panel names it).
  const previous = useMemo(() => {
    if (trend.state !== 'done' || session === null) return undefined;
    const p = previousScanOf(trend.value, session);
    return p === null ? null : { href: sessionHref(p.session_id, p.client_id), when: formatDate(scanTimeOf(p)) };
  }, [trend, session]);

  if (!valid)
    return (
      <Page title="Session">
        <p class="alert alert-error" role="alert">
          No session given. <a href="/console/sessions">Open one from the list</a>.
        </p>
      </Page>
    );

  const choices = clientChoicesOf(detail);
  if (choices !== null)
    return (
      <Page title={`Session ${ref.session}`}>
        <ErrorMessage error={(detail as { error: unknown }).error} />
        <p>Choose the client:</p>
        <ul>
          {choices.map((c) => (
            <li key={c ?? ''}>
              <a href={sessionHref(ref.session, c ?? '')}>{c ?? 'no client'}</a>
            </li>
          ))}
        </ul>
      </Page>
    );

  return (
    <Page title={`Session ${ref.session}`}>
      {detail.state === 'failed' ? null : (
        // Summary and the first findings page load side by side: findings do not wait for the session.
        <>
          <Section id="summary" title="Summary">
            <Loading loaded={detail}>
              {(d: SessionDetail) => (
                <>
                  <Scores session={d.session} />
                  <h3>Findings by severity</h3>
                  <SeverityBreakdown counts={d.session.severity_summary} />
                </>
              )}
            </Loading>
          </Section>
          <Section id="findings" title="Findings">
            <Findings
              key={version}
              ref_={ref}
              scope={scope}
              refresh={dated}
              change={change}
              onChangeShown={showChange}
              previous={previous}
              onChanged={() => setTriage((t) => t + 1)}
            />
          </Section>
        </>
      )}
      <Loading loaded={detail}>
        {(d: SessionDetail) => (
          <>
            <Section id="exceptions" title="Risk exceptions">
              <Exceptions ref_={ref} version={triage} />
            </Section>
            <Section id="due-days" title="Remediation due dates">
              <DueDaysSettings
                clientId={d.session.client_id ?? ''}
                canEdit={mayTriage}
                onSaved={() => setDated((n) => n + 1)}
              />
            </Section>
            <Section id="compliance" title="Compliance">
              <Compliance session={d.session} />
              <Orc964
                session={d.session}
                file={blocks.state === 'done' ? ({ orc_964: blocks.value.orc_964 ?? undefined } as SessionFile) : null}
              />
            </Section>
            <Section id="topology" title="Topology">
              <Loading loaded={blocks}>{(b) => <Topology topology={b.topology ?? undefined} />}</Loading>
            </Section>
            <Section id="trend" title="Risk trend for this target">
              <Loading loaded={trend}>{(t) => <Trend sessions={t} current={d.session.session_id} />}</Loading>
            </Section>
            <Section id="benchmark" title="Benchmark">
              <Loading loaded={benchmark}>{(b) => <Benchmark benchmark={b} />}</Loading>
            </Section>
            <Section id="report" title="Report">
              <Reports session={d.session} ref_={ref} onShareChanged={reload} />
            </Section>
            <Section id="files" title="Files and sharing">
              <Downloads session={d.session} ref_={ref} />
              <ShareLink session={d.session} ref_={ref} onChanged={reload} />
            </Section>
            <Section id="export" title="Export findings">
              <Exports session={d.session} ref_={ref} />
            </Section>
            <Section id="status" title="Review status">
              <ReviewStatus detail={d} ref_={ref} onChanged={reload} />
            </Section>
            <Section id="delete" title="Delete">
              <p>Deleting removes the session, its files and its share link for good.</p>
              <ConfirmButton
                label="Delete session"
                question={`Delete session ${ref.session} and all its files? This cannot be undone.`}
                confirmLabel="Delete for good"
                onConfirm={async () => {
                  await deleteSession(ref);
                  route(`/console/sessions?deleted=${encodeURIComponent(ref.session)}`);
                }}
              />
            </Section>
          </>
        )}
      </Loading>
    </Page>
  );
}
