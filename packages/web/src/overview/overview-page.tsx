import { type OverviewResponse, sessionHref } from '@svc/protocol';
import { getOverview, getPosture } from '../api/overview.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { countOf, formatCount, formatDate, formatScore, NO_VALUE } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { SeverityBadge } from '../ui/severity.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { useLoad } from '../ui/use-load.ts';
import { fleetHref, NO_FILTERS } from '../fleet/agent-view.ts';
import { PostureSection } from './posture-section.tsx';
import { drawnSeries, riskCaption } from './chart-lines.ts';
import { clientName, RiskChart } from './risk-chart.tsx';

function RiskSection(props: { data: OverviewResponse }) {
  const { risk, risk_targets, days } = props.data;
  return (
    <section class="panel" aria-labelledby="risk-h">
      <h2 id="risk-h">Risk over time</h2>
      <p class="muted">{riskCaption(days, risk.length, risk_targets)}</p>
      {risk.length === 0 ? (
        <p>No scored scans in this period.</p>
      ) : (
        <>
          <RiskChart series={drawnSeries(risk)} />
          <details class="chart-data">
            <summary>Risk data as a table</summary>
            <DataTable
              label="Risk by scan"
              columns={['Client', 'Scanned', 'Target', 'Risk']}
              stack={{ lead: ['Risk'] }}
            >
              {risk.flatMap((s) =>
                s.points.map((p) => (
                  <tr key={`${s.client_id ?? ''}/${p.session_id}`}>
                    <td>{clientName(s)}</td>
                    <td class="nowrap">{formatDate(p.scanned_at)}</td>
                    <td>
                      <a href={sessionHref(p.session_id, s.client_id)}>{p.target ?? p.session_id}</a>
                    </td>
                    <td>
                      <span class={`grade grade-small grade-${p.risk_grade ?? 'none'}`}>
                        {p.risk_grade ?? NO_VALUE}
                      </span>{' '}
                      {formatScore(p.risk_score)}
                    </td>
                  </tr>
                )),
              )}
            </DataTable>
          </details>
        </>
      )}
    </section>
  );
}

function FleetSection(props: { fleet: NonNullable<OverviewResponse['fleet']> }) {
  const { fleet } = props;
  const minutes = Math.round(fleet.stale_threshold_seconds / 60);
  return (
    <section class="panel" aria-labelledby="fleet-h">
      <h2 id="fleet-h">Fleet health</h2>
      <dl class="counts">
        <div class="count count-online">
          <dt>Online</dt>
          <dd>{formatCount(fleet.online)}</dd>
        </div>
        <div class="count count-stale">
          <dt>Stale</dt>
          <dd>
            <a
              href={fleetHref({ ...NO_FILTERS, state: 'stale' })}
              aria-label={countOf(fleet.stale, 'stale agent', 'stale agents')}
            >
              {formatCount(fleet.stale)}
            </a>
          </dd>
        </div>
        <div class="count count-deregistered">
          <dt>Deregistered</dt>
          <dd>{formatCount(fleet.deregistered)}</dd>
        </div>
      </dl>
      <p class="muted">
        Stale: no heartbeat for more than {minutes} minutes. <a href="/console/fleet">Open the fleet</a>.
      </p>
    </section>
  );
}

function ExpiringSection(props: { expiring: OverviewResponse['expiring'] }) {
  const { expiring } = props;
  return (
    <section class="panel" aria-labelledby="expiring-h">
      <h2 id="expiring-h">Sessions expiring soon</h2>
      <p class="muted">
        {expiring.total === 0
          ? `No session expires in the next ${expiring.within_days} days.`
          : `${countOf(expiring.total, 'session expires', 'sessions expire')} in the next ${expiring.within_days} days${expiring.total > expiring.sessions.length ? `; the first ${formatCount(expiring.sessions.length)} are listed` : ''}.`}
      </p>
      {expiring.sessions.length > 0 ? (
        <DataTable
          label="Expiring sessions, soonest first"
          columns={['Days left', 'Session', 'Client', 'Target', 'Expires']}
          stack={{ lead: ['Days left'] }}
        >
          {expiring.sessions.map((s) => (
            <tr key={`${s.client_id ?? ''}/${s.session_id}`} data-session={s.session_id}>
              <td>{s.days_remaining}</td>
              <td>
                <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
              </td>
              <td>{s.client ?? s.client_id ?? NO_VALUE}</td>
              <td>{s.target ?? NO_VALUE}</td>
              <td class="nowrap">{formatDate(s.expires_at)}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}

function FindingsSection(props: { findings: OverviewResponse['top_findings'] }) {
  return (
    <section class="panel" aria-labelledby="top-findings-h">
      <h2 id="top-findings-h">Most frequent open findings</h2>
      <p class="muted">Over the latest scan of each target.</p>
      {props.findings.length === 0 ? (
        <p>No open findings.</p>
      ) : (
        <DataTable
          label="Open findings by frequency"
          columns={['Severity', 'Finding', 'Targets', 'Open entries']}
          stack={{ lead: ['Severity'] }}
        >
          {props.findings.map((f) => (
            <tr key={f.title} data-finding={f.title}>
              <td>{f.severity === null ? NO_VALUE : <SeverityBadge severity={f.severity} />}</td>
              <td>{f.title}</td>
              <td>{formatCount(f.targets)}</td>
              <td>{formatCount(f.open)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** The first page after sign-in: the state of every client the user may see, at a glance. */
export function OverviewPage() {
  const data = useLoad(() => getOverview(), []);
  const posture = useLoad(() => getPosture(), []);
  return (
    <Page title="Overview">
      {posture.state === 'failed' ? <ErrorMessage error={posture.error} /> : null}
      {posture.state === 'done' ? <PostureSection data={posture.value} now={Date.now()} /> : null}
      {data.state === 'loading' ? (
        <p class="busy-sign" role="status" aria-busy="true">
          Loading…
        </p>
      ) : null}
      {data.state === 'failed' ? <ErrorMessage error={data.error} /> : null}
      {data.state === 'done' ? (
        <div class="overview">
          <RiskSection data={data.value} />
          {data.value.fleet !== null ? <FleetSection fleet={data.value.fleet} /> : null}
          <ExpiringSection expiring={data.value.expiring} />
          <FindingsSection findings={data.value.top_findings} />
        </div>
      ) : null}
    </Page>
  );
}
