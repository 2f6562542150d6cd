import type { FindingChange, RemediationStatus, RemediationSummary, TriageSummary } from '@svc/protocol';
import type { Selectable } from 'kysely';
import type { SessionNotesTable, StatusHistoryTable } from '../db/schema.ts';
import type { SessionRow } from './queries.ts';

/**
 * What the session operations return and present.ts turns into API bodies. A leaf: the
 * operations import the presenter, so the presenter may not import them back.
 */

/** What commit.ts reports of an upload made visible. */
export interface CommitResult {
  sessionId: string;
  /** null when a re-upload kept a revoked link revoked. */
  shareToken: string | null;
  replaced: boolean;
  /** What the upload did to the findings of record of its target; null without a session file to merge. */
  findings: Record<FindingChange, number> | null;
}

/** One session with its share token, status history and notes (listing.ts). */
export interface SessionDetail {
  row: SessionRow;
  shareToken: string | null;
  history: Selectable<StatusHistoryTable>[];
  notes: Selectable<SessionNotesTable>[];
  /** Its numbers as its triage stands now; null: what its file said. */
  triage: TriageSummary | null;
}

export interface ExceptionChange {
  reason: string;
  /** YYYY-MM-DD, today or later (checked by parseRemediationItems in remediation.ts). */
  expiry: string;
}

/** Exactly one of `title` (every entry of that title) and `fingerprint` (one finding). */
export interface RemediationChange {
  title?: string;
  fingerprint?: string;
  status?: RemediationStatus;
  /** Replaces the matched entries' `note`; a note alone is written but is not a status change. */
  note?: string;
  /** Sets (object) or withdraws (null) the risk exception of the matched entry; fingerprint only. */
  exception?: ExceptionChange | null;
  /** Marks (reason) or unmarks (null) the finding as a false positive; fingerprint only. */
  falsePositive?: { reason: string } | null;
}

/** What one remediation update did (remediation.ts). */
export interface RemediationOutcome {
  changed: number;
  unmatched: string[];
  matched: number[];
  summary: RemediationSummary;
}

/** What the share page states besides the uploaded report (shared-triage.ts). */
export interface SharedTriage {
  summary: TriageSummary | null;
  asOf: Date;
  /** When the report shown was made: the session's upload (the benchmark's refresh follows at once). */
  reportAt: Date;
  /** The last change of a finding of this session after the report was stored, else null. */
  changedSince: Date | null;
}
