import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { getSession, type SessionDetail } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { Page } from '../ui/page.tsx';

/** The session view at `/collect/?session=<id>` (SPEC: command results link here). */
export function SessionViewPage() {
  const { query } = useLocation();
  const id = query['session'] ?? '';
  const clientId = query['client_id'];
  const [detail, setDetail] = useState<SessionDetail | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let live = true;
    setDetail(null);
    setError(null);
    if (id === '') {
      setError(new Error('No session given: open a session from the list.'));
      return;
    }
    getSession(id, clientId)
      .then((d) => live && setDetail(d))
      .catch((err: unknown) => live && setError(err));
    return () => {
      live = false;
    };
  }, [id, clientId]);

  return (
    <Page title={`Session ${id}`}>
      <ErrorMessage error={error} />
      {detail === null ? null : (
        <dl class="facts">
          <dt>Client</dt>
          <dd>{detail.session.client ?? detail.session.client_id ?? '–'}</dd>
          <dt>Target</dt>
          <dd>{detail.session.target ?? '–'}</dd>
          <dt>Status</dt>
          <dd>{detail.session.status}</dd>
        </dl>
      )}
    </Page>
  );
}
