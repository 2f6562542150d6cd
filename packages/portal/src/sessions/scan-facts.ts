import { lenient } from '@svc/protocol';

const { isObj, str } = lenient;

export interface ScanFacts {
  /** When the scan ran, null when the file does not say. */
  scannedAt: Date | null;
  /** The scan run the file is (metadata.run_id), null when it names none (older scanners). */
  runId?: string | null;
}

function instant(v: unknown): Date | null {
  const s = str(v);
  if (s === null) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** What the listing's scan-time order and the re-upload rule (commit.ts) read from an uploaded file. */
export function scanFactsOf(doc: unknown): ScanFacts {
  const metadata = isObj(doc) && isObj(doc['metadata']) ? doc['metadata'] : {};
  return {
    scannedAt: instant(metadata['finished_at']) ?? instant(metadata['started_at']),
    runId: str(metadata['run_id']),
  };
}
