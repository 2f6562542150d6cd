import { lenient, type OpenFinding, SEVERITIES, type Severity } from '@svc/protocol';

const { isObj, str, objs } = lenient;

/** Titles kept per session: enough for a portal-wide top ten, bounded for a 10,000-finding file. */
const MAX_TITLES = 200;

export interface ScanFacts {
  /** When the scan ran, null when the file does not say. */
  scannedAt: Date | null;
  openFindings: OpenFinding[];
}

function instant(v: unknown): Date | null {
  const s = str(v);
  if (s === null) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * The open remediation entries of a session file by title: `.remediation[]` holds the open
 * ones (resolved entries move to `.remediation_resolved[]`); an entry marked resolved in
 * place or under an accepted exception does not count. Severity: the highest among them.
 */
export function openFindingsOf(doc: unknown): OpenFinding[] {
  const root = isObj(doc) ? doc : {};
  const byTitle = new Map<string, OpenFinding>();
  for (const e of objs(root['remediation'])) {
    const title = str(e['title']);
    if (title === null || e['status'] === 'resolved' || e['exception_status'] === 'accepted') continue;
    const sev = (SEVERITIES as readonly unknown[]).includes(e['severity']) ? (e['severity'] as Severity) : null;
    const seen = byTitle.get(title);
    if (seen === undefined) byTitle.set(title, { title, severity: sev, count: 1 });
    else {
      seen.count++;
      if (sev !== null && (seen.severity === null || SEVERITIES.indexOf(sev) < SEVERITIES.indexOf(seen.severity)))
        seen.severity = sev;
    }
  }
  return [...byTitle.values()]
    .sort((a, b) => b.count - a.count || (a.title < b.title ? -1 : a.title > b.title ? 1 : 0))
    .slice(0, MAX_TITLES);
}

/** What the overview and the listing's scan-time order read from an uploaded file. */
export function scanFactsOf(doc: unknown): ScanFacts {
  const metadata = isObj(doc) && isObj(doc['metadata']) ? doc['metadata'] : {};
  return {
    scannedAt: instant(metadata['finished_at']) ?? instant(metadata['started_at']),
    openFindings: openFindingsOf(doc),
  };
}
