import {
  POSTURE_COUNTS,
  type PostureClient,
  type PostureResponse,
  type PostureTarget,
  sessionHref,
} from '@svc/protocol';
import { countOf, formatAge, formatCount, formatDate, NO_VALUE, secondsSince } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';
import { COUNT_LABELS, countHref, sparkPoints, trendText } from './posture-model.ts';
import { fleetHref, NO_FILTERS } from '../fleet/agent-view.ts';
import './posture.css';

const SPARK_W = 80;
const SPARK_H = 24;

const clientName = (c: PostureClient) => c.client ?? c.client_id;

/** A count as a link to the portfolio page listing exactly those findings; 0 stays plain. */
function CountCell(props: {
  n: number;
  count: (typeof POSTURE_COUNTS)[number];
  clientId: string;
  target?: string;
  of: string;
}) {
  const { n, count } = props;
  return (
    <td class={`posture-n posture-${count}${n > 0 ? ' is-some' : ''}`}>
      <a
        href={countHref(count, props.clientId, props.target)}
        aria-label={`${formatCount(n)} ${COUNT_LABELS[count].words(n)} in ${props.of}`}
      >
        {formatCount(n)}
      </a>
    </td>
  );
}

function LastScan(props: { scan: PostureTarget['last_scan']; clientId: string; now: number }) {
  if (props.scan === null) return <td>{NO_VALUE}</td>;
  return (
    <td>
      <a href={sessionHref(props.scan.session_id, props.clientId)} title={formatDate(props.scan.scanned_at)}>
        {formatAge(secondsSince(props.scan.scanned_at, props.now))}
      </a>
    </td>
  );
}

function Trend(props: { trend: PostureTarget['trend'] }) {
  const text = trendText(props.trend);
  return (
    <td class="posture-trend">
      {props.trend.length > 1 ? (
        <svg
          width={SPARK_W}
          height={SPARK_H}
          viewBox={`0 0 ${SPARK_W} ${SPARK_H}`}
          aria-hidden="true"
          focusable="false"
        >
          <polyline
            points={sparkPoints(props.trend, SPARK_W, SPARK_H)}
            fill="none"
            stroke="currentColor"
            stroke-width="2"
          />
        </svg>
      ) : null}{' '}
      <span>{text}</span>
    </td>
  );
}

const countColumns = POSTURE_COUNTS.map((k) => COUNT_LABELS[k].column);

function TargetsOf(props: { client: PostureClient; now: number }) {
  const { client } = props;
  const name = clientName(client);
  return (
    <details class="posture-targets" data-client={client.client_id}>
      <summary>
        Targets of {name} ({client.targets.length})
      </summary>
      <DataTable
        label={`Targets of ${name}, most open criticals first`}
        columns={['Target', ...countColumns, 'Last scan', 'Risk trend']}
        stack={{ lead: ['Target'] }}
      >
        {client.targets.map((t) => (
          <tr key={t.target} data-target={t.target}>
            <th scope="row" class="posture-name">
              {t.target}
            </th>
            {POSTURE_COUNTS.map((k) => (
              <CountCell
                key={k}
                n={t[k]}
                count={k}
                clientId={client.client_id}
                target={t.target}
                of={`${t.target} (${name})`}
              />
            ))}
            <LastScan scan={t.last_scan} clientId={client.client_id} now={props.now} />
            <Trend trend={t.trend} />
          </tr>
        ))}
      </DataTable>
    </details>
  );
}

/** Per client and per target: what to act on today, each number a link into the portfolio page. */
export function PostureSection(props: { data: PostureResponse; now: number }) {
  const { clients } = props.data;
  const fleet = clients.some((c) => c.stale_agents !== null);
  return (
    <section class="panel" aria-labelledby="posture-h">
      <h2 id="posture-h">Clients and targets</h2>
      <p class="muted">
        Open findings of record without an exception in effect or a false-positive mark; overdue: past the due date.
        Each number opens those findings.
      </p>
      {clients.length === 0 ? (
        <p>No findings of record yet.</p>
      ) : (
        <>
          <DataTable
            label="Clients, most open criticals first"
            columns={['Client', ...countColumns, 'Last scan', ...(fleet ? ['Stale agents'] : [])]}
            stack={{ lead: ['Client'] }}
          >
            {clients.map((c) => (
              <tr key={c.client_id} data-client={c.client_id}>
                <th scope="row" class="posture-name">
                  {clientName(c)}
                </th>
                {POSTURE_COUNTS.map((k) => (
                  <CountCell key={k} n={c[k]} count={k} clientId={c.client_id} of={clientName(c)} />
                ))}
                <LastScan scan={c.last_scan} clientId={c.client_id} now={props.now} />
                {fleet ? (
                  <td class="posture-stale">
                    <a
                      href={fleetHref({ ...NO_FILTERS, state: 'stale', client: c.client_id })}
                      aria-label={`${countOf(c.stale_agents ?? 0, 'stale agent', 'stale agents')} of ${clientName(c)}`}
                    >
                      {formatCount(c.stale_agents ?? 0)}
                    </a>
                  </td>
                ) : null}
              </tr>
            ))}
          </DataTable>
          {clients
            .filter((c) => c.targets.length > 0)
            .map((c) => (
              <TargetsOf key={c.client_id} client={c} now={props.now} />
            ))}
        </>
      )}
    </section>
  );
}
