import type { BulkChange, BulkResponse, RemediationUpdateItem } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors.ts';
import { type SessionRef, updateRemediation } from '../api/sessions.ts';
import { changeChosen } from '../api/findings.ts';
import type { Message } from './findings-model.ts';

/** Whose findings of record a session's findings are: its client ('' without one) and its target. */
export interface RecordScope {
  clientId: string;
  target: string;
}

const CONFLICT = 'This finding was changed by someone else. Reload the page to see the current status.';

/**
 * Sends changes and reports the outcome; shared by the row controls, the bulk bar and the
 * detail panel. One finding: PATCH /api/remediation-update on the session. Several: one
 * POST /api/findings/bulk by their fingerprints within the session's client and target.
 */
export interface Sender {
  busy: boolean;
  send: (item: RemediationUpdateItem, done: (matched: number) => string) => Promise<boolean>;
  /** Null until the session's client and target are known. */
  bulk:
    | ((fingerprints: string[], change: BulkChange, done: (answer: BulkResponse) => Message) => Promise<boolean>)
    | null;
}

export function useSender(
  ref: SessionRef,
  scope: RecordScope | null,
  onChanged: () => void,
  setMessage: (m: Message | null) => void,
): Sender {
  const [busy, setBusy] = useState(false);
  async function run<T>(call: () => Promise<T>, report: (answer: T) => Message): Promise<boolean> {
    setBusy(true);
    setMessage(null);
    try {
      const answer = await call();
      setMessage(report(answer));
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
  }
  return {
    busy,
    send: (item, done) =>
      run(
        () => updateRemediation(ref, [item]),
        (r) => ({ kind: 'ok', text: done(r.results[0]?.matched ?? 0) }),
      ),
    bulk:
      scope === null
        ? null
        : (fingerprints, change, done) =>
            run(
              () => changeChosen({ client_id: scope.clientId, target: scope.target, fingerprints }, change),
              (r) => done(r),
            ),
  };
}
