import { sessionHref } from '@svc/protocol';
import { formatCount, formatDate, NO_VALUE } from '../ui/format.ts';
import { getDbHealth } from '../api/db-health.ts';
import { useData } from '../ui/use-load.ts';
import { LoadError } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { Page } from '../ui/page.tsx';

const orDash = (v: string | number | null) => (v === null || v === '' ? NO_VALUE : String(v));

/** Database health: size and connections, row counts, storage, sessions by status and client, recent activity. */
export function DbHealthPage() {
  const health = useData(getDbHealth, []);
  const h = health.data;
  return (
    <Page
      title="Database health"
      actions={
        <button type="button" onClick={health.reload}>
          Refresh
        </button>
      }
    >
      <div class="adm-page">
        <LoadError load={health} />
        {h && (
          <>
            <section aria-labelledby="db-info">
              <h2 id="db-info">Database</h2>
              <dl class="adm-dl">
                <dt>Health</dt>
                <dd data-field="health">{h.neon_usage.health}</dd>
                <dt>Name</dt>
                <dd>{h.database_info.database_name}</dd>
                <dt>Version</dt>
                <dd>{h.database_info.version}</dd>
                <dt>Provider</dt>
                <dd>{h.database_info.provider}</dd>
                <dt>Size</dt>
                <dd>{h.database_info.size_human}</dd>
                <dt>Connections</dt>
                <dd>
                  {h.database_info.active_connections} of {h.database_info.max_connections}
                </dd>
                <dt>Storage</dt>
                <dd>
                  {h.neon_usage.storage_used_mb} MB
                  {h.neon_usage.storage_limit_mb !== null
                    ? ` of ${h.neon_usage.storage_limit_mb} MB (${orDash(h.neon_usage.storage_percent)} %)`
                    : ''}
                </dd>
              </dl>
            </section>
            <section aria-labelledby="db-tables">
              <h2 id="db-tables">Rows per table</h2>
              <DataTable label="Rows per table" columns={['Table', 'Rows']} stack={{ lead: ['Table'] }}>
                {Object.entries(h.table_counts).map(([table, count]) => (
                  <tr key={table} data-table={table}>
                    <th scope="row">{table}</th>
                    <td>{formatCount(count)}</td>
                  </tr>
                ))}
              </DataTable>
            </section>
            <section aria-labelledby="db-sessions">
              <h2 id="db-sessions">Sessions</h2>
              <dl class="adm-dl">
                {Object.entries(h.session_stats.by_status).map(([status, n]) => [
                  <dt key={`${status}-t`}>{status}</dt>,
                  <dd key={`${status}-d`}>{formatCount(n)}</dd>,
                ])}
              </dl>
              <DataTable
                label="Sessions by client"
                columns={['Client', 'Client id', 'Sessions']}
                stack={{ lead: ['Client'] }}
              >
                {h.session_stats.by_client.map((c) => (
                  <tr key={`${c.client_id}/${c.client}`}>
                    <th scope="row">{orDash(c.client)}</th>
                    <td>{orDash(c.client_id)}</td>
                    <td>{formatCount(c.count)}</td>
                  </tr>
                ))}
              </DataTable>
              <h3>Recent uploads</h3>
              <DataTable
                label="Recent uploads"
                columns={['Session', 'Client', 'Target', 'Risk', 'Uploaded']}
                stack={{ lead: ['Risk'] }}
              >
                {h.session_stats.recent_uploads.map((u) => (
                  <tr key={`${u.client_id ?? ''}/${u.session_id}`}>
                    <th scope="row">
                      <a href={sessionHref(u.session_id, u.client_id)}>{u.session_id}</a>
                    </th>
                    <td>{orDash(u.client)}</td>
                    <td>{orDash(u.target)}</td>
                    <td>
                      {orDash(u.risk_score)} {u.risk_grade ?? ''}
                    </td>
                    <td>{formatDate(u.uploaded_at)}</td>
                  </tr>
                ))}
              </DataTable>
            </section>
            <section aria-labelledby="db-activity">
              <h2 id="db-activity">Recent activity</h2>
              <DataTable
                label="Recent activity"
                columns={['Time', 'Event', 'Actor', 'Session']}
                stack={{ lead: ['Event'] }}
              >
                {h.recent_activity.map((a, i) => (
                  <tr key={`${a.created_at}-${i}`}>
                    <td>{formatDate(a.created_at)}</td>
                    <th scope="row">{a.event_type}</th>
                    <td>{a.actor}</td>
                    <td>{orDash(a.session_id)}</td>
                  </tr>
                ))}
              </DataTable>
            </section>
          </>
        )}
      </div>
    </Page>
  );
}
