import type { SessionView } from '@svc/protocol';
import { SESSION_STATUSES } from '@svc/protocol';
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { listSessions } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { Page } from '../ui/page.tsx';
import { sessionHref } from './links.ts';

const PAGE_SIZE = 25;

/** Sessions the signed-in user may see, newest first, with filters in the address (shareable, back button). */
export function SessionsPage() {
  const { query } = useLocation();
  const [sessions, setSessions] = useState<SessionView[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    listSessions({
      limit: PAGE_SIZE,
      client_id: query['client_id'] || undefined,
      status: (query['status'] || undefined) as SessionView['status'] | undefined,
      target: query['target'] || undefined,
      cursor: query['cursor'] || undefined,
    })
      .then((r) => live && setSessions(r.sessions))
      .catch((err: unknown) => live && setError(err));
    return () => {
      live = false;
    };
  }, [query['client_id'], query['status'], query['target'], query['cursor']]);

  return (
    <Page title="Sessions">
      <ErrorMessage error={error} />
      <p class="muted">Statuses: {SESSION_STATUSES.join(', ')}</p>
      {sessions === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Client</th>
              <th scope="col">Target</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={`${s.client_id}/${s.session_id}`}>
                <td>
                  <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
                </td>
                <td>{s.client ?? s.client_id ?? '–'}</td>
                <td>{s.target ?? '–'}</td>
                <td>{s.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}
