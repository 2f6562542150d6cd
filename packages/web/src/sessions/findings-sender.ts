import type { RemediationUpdateItem } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors.ts';
import { type SessionRef, updateRemediation } from '../api/sessions.ts';

const CONFLICT = 'This finding was changed by someone else. Reload the page to see the current status.';

export type Message = { kind: 'ok' | 'error'; text: string };

/** Sends one remediation item and reports the outcome; shared by the row controls, the bulk bar and the detail panel. */
export interface Sender {
  busy: boolean;
  send: (item: RemediationUpdateItem, done: (matched: number) => string) => Promise<boolean>;
}

export function useSender(ref: SessionRef, onChanged: () => void, setMessage: (m: Message | null) => void): Sender {
  const [busy, setBusy] = useState(false);
  return {
    busy,
    async send(item, done) {
      setBusy(true);
      setMessage(null);
      try {
        const r = await updateRemediation(ref, [item]);
        setMessage({ kind: 'ok', text: done(r.results[0]?.matched ?? 0) });
        onChanged();
        return true;
      } catch (err) {
        setMessage({
          kind: 'error',
          text: err instanceof ApiError && err.status === 409 ? CONFLICT : describeError(err),
        });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}
