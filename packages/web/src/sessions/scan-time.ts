import type { SessionView } from '@svc/protocol';

/** A session of the trend; `scanned_at` where the portal's listing carries it. */
export type TrendSession = SessionView & { scanned_at?: string | null };

/** A scanner session id starts with the scan's start, `YYYYMMDD_HHMMSS` (the scanner's clock, taken as UTC). */
const SCANNER_ID = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})/;

/**
 * When the session's scan ran: the portal's scan time when the listing has it, else the
 * time in a scanner-style session id, else (an id of another shape) the upload time. An
 * offline scan uploaded days later, or a batch uploaded out of order, then still falls
 * where it belongs on the trend.
 */
export function scanTimeOf(s: TrendSession): string {
  if (typeof s.scanned_at === 'string' && s.scanned_at !== '') return s.scanned_at;
  const m = SCANNER_ID.exec(s.session_id);
  if (m !== null) {
    const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`;
    if (!Number.isNaN(Date.parse(iso))) return new Date(iso).toISOString();
  }
  return s.uploaded_at;
}

/** The scan of the same target that ran just before `current` among `sessions` (the trend's), or null. */
export function previousScanOf(sessions: readonly TrendSession[], current: TrendSession): TrendSession | null {
  const when = (s: TrendSession) => Date.parse(scanTimeOf(s));
  const at = when(current);
  let best: TrendSession | null = null;
  for (const s of sessions) {
    if (s.session_id === current.session_id || !(when(s) <= at)) continue;
    if (best === null || when(s) > when(best)) best = s;
  }
  return best;
}
