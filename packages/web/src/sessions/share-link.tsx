import type { SessionView } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { revokeShare, rotateShare, type SessionRef } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';

/** While the link is revoked: one button that issues a new one. */
export function NewShareLink(props: { ref_: SessionRef; onDone: () => void }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <ErrorMessage error={error} />
      <button
        type="button"
        onClick={() => rotateShare(props.ref_).then(props.onDone, (err: unknown) => setError(describeError(err)))}
      >
        Create a new share link
      </button>
    </>
  );
}

/**
 * The share link: copy it, rotate it (a new link; whoever has the old one loses access at
 * once) or revoke it (no link until a new one is made). Both ask first, since people who were
 * sent the link are cut off; what happened is announced, and the view reloads to show the
 * new state (the report frames use the link too).
 */
export function ShareLink(props: { session: SessionView; ref_: SessionRef; onChanged: () => void }) {
  const [note, setNote] = useState<string | null>(null);
  const url = props.session.share_url;
  const done = (message: string) => {
    setNote(message);
    props.onChanged();
  };
  if (url === null)
    return (
      <div class="stack share-link">
        <p>This session has no share link: it was revoked. Nobody can open the report through an old link.</p>
        <NewShareLink ref_={props.ref_} onDone={() => done('A new share link was made.')} />
        <p role="status" class="muted small">
          {note ?? ''}
        </p>
      </div>
    );
  async function copy() {
    try {
      await navigator.clipboard.writeText(url!);
      setNote('Link copied.');
    } catch {
      const input = document.getElementById('share-url') as HTMLInputElement | null;
      input?.select();
      setNote('Copying was refused by the browser: the link is selected, copy it with Ctrl+C.');
    }
  }
  return (
    <div class="stack share-link">
      <label>
        Share link (anyone with it can view this session's report)
        <input id="share-url" type="text" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          Copy link
        </button>
        <ConfirmButton
          label="Rotate link"
          question="Make a new share link? The current link stops working at once for everyone who has it."
          confirmLabel="Make a new link"
          onConfirm={() =>
            rotateShare(props.ref_).then(() => done('A new share link was made; the old one no longer works.'))
          }
        />
        <ConfirmButton
          label="Revoke link"
          question="Revoke the share link? Nobody can open the report through it any more, until you make a new one."
          confirmLabel="Revoke the link"
          onConfirm={() => revokeShare(props.ref_).then(() => done('The share link is revoked.'))}
        />
      </div>
      <p role="status" class="muted small">
        {note ?? ''}
      </p>
    </div>
  );
}
