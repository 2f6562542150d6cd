import {
  EXPORT_FORMATS,
  EXPORT_MEDIA,
  type ExportFormat,
  exportFileName,
  isShareToken,
  type SessionFileName,
  type SessionView,
} from '@svc/protocol';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { downloadFile, type SessionRef } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { formatBytes } from '../ui/format.ts';
import { exportFindings } from '../api/session-findings.ts';
import { NewShareLink } from './share-link.tsx';

/** The share token in a share URL (`.../share/?token=<64 hex>`), or null. */
function shareTokenOf(shareUrl: string | null): string | null {
  if (shareUrl === null) return null;
  try {
    const token = new URL(shareUrl, location.origin).searchParams.get('token');
    return isShareToken(token) ? token : null;
  } catch {
    return null;
  }
}

const FRAMES = [
  { file: 'report.html', title: 'Scan report' },
  { file: 'exec_summary.html', title: 'Executive summary' },
] as const;

/**
 * The report and executive summary, each in a frame from /collect/frame: served with the
 * sandbox CSP (an opaque origin, nothing loads from elsewhere), and sandboxed here to
 * scripts only: no allow-same-origin, allow-top-navigation, allow-popups or allow-forms, so
 * their scripts run but can reach neither the console's token nor this page, open no window
 * and submit nothing. The console's `frame-src 'self'` keeps the frame on the portal. A bar
 * above the frame says whose content it is: a report may draw a sign-in form of its own.
 * The frame's address carries the session's share token, the one credential that a frame
 * can present; it opens this session only.
 */
export function Reports(props: { session: SessionView; onShareChanged: () => void; ref_: SessionRef }) {
  const token = shareTokenOf(props.session.share_url);
  const present = FRAMES.filter((f) => props.session.files.some((s) => s.name === f.file));
  const [shown, setShown] = useState<string | null>(present[0]?.file ?? null);
  if (present.length === 0) return <p>This session has no HTML report.</p>;
  if (token === null)
    return (
      <div>
        <p>
          The share link of this session is revoked, and the report is shown through it. Create a new link to view it.
        </p>
        <NewShareLink ref_={props.ref_} onDone={props.onShareChanged} />
      </div>
    );
  const current = present.find((f) => f.file === shown) ?? present[0]!;
  return (
    <div class="reports">
      {present.length > 1 ? (
        <fieldset class="row plain">
          <legend class="visually-hidden">Document</legend>
          {present.map((f) => (
            <button
              key={f.file}
              type="button"
              class={f.file === current.file ? '' : 'button-quiet'}
              aria-pressed={f.file === current.file}
              onClick={() => setShown(f.file)}
            >
              {f.title}
            </button>
          ))}
        </fieldset>
      ) : null}
      <div class="report-box">
        <p class="report-label" id="report-label" role="note">
          <strong>
            Scanner report uploaded by{' '}
            {props.session.client_id === null ? 'a scanner without a client id' : `client ${props.session.client_id}`}
          </strong>{' '}
          — the content below is not part of the portal; the portal never asks for your password here.
        </p>
        <iframe
          key={current.file}
          class="report-frame"
          title={current.title}
          src={`/collect/frame?${new URLSearchParams({ token, file: current.file }).toString()}`}
          sandbox="allow-scripts"
          referrerpolicy="no-referrer"
          aria-describedby="report-label"
        />
      </div>
    </div>
  );
}

/** Hands a fetched file to the browser's downloads under `name`. */
function saveBlob(blob: Blob, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/** Runs one save at a time and says what went wrong, for the buttons below. */
function useSaver() {
  const [error, setError] = useState<string | null>(null);
  async function run(fetchFile: () => Promise<Blob>, name: string) {
    setError(null);
    try {
      saveBlob(await fetchFile(), name);
    } catch (err) {
      setError(describeError(err));
    }
  }
  return { error, run };
}

/** Every stored file, saved through the API with the signed-in user's token. */
export function Downloads(props: { session: SessionView; ref_: SessionRef }) {
  const { error, run } = useSaver();
  return (
    <>
      <ErrorMessage error={error} />
      <ul class="files">
        {props.session.files.map((f) => (
          <li key={f.name}>
            <button
              type="button"
              class="button-quiet"
              onClick={() =>
                void run(
                  () => downloadFile(props.ref_, f.name as SessionFileName),
                  `${props.session.session_id}_${f.name}`,
                )
              }
            >
              Download {f.name}
            </button>{' '}
            <span class="muted small">{formatBytes(f.size)}</span>
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * The findings exported for other tools (docs/exports.md), fetched with the signed-in user's
 * token like the downloads: each finding keeps its fingerprint as identity, so importing the
 * next session's export updates the same findings there.
 */
export function Exports(props: { session: SessionView; ref_: SessionRef }) {
  const { error, run } = useSaver();
  const save = (format: ExportFormat) =>
    void run(() => exportFindings(props.ref_, format), exportFileName(props.session.session_id, format));
  return (
    <>
      <p>
        The findings with their remediation status and exceptions, for spreadsheets, GitHub code scanning or DefectDojo.
      </p>
      <ErrorMessage error={error} />
      <fieldset class="row plain">
        <legend class="visually-hidden">Export format</legend>
        {EXPORT_FORMATS.map((format) => (
          <button key={format} type="button" class="button-quiet" onClick={() => save(format)}>
            Export {EXPORT_MEDIA[format].label}
          </button>
        ))}
      </fieldset>
    </>
  );
}
