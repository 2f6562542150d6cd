import { NO_CLIENT, type SessionFileName, type SessionMetadata } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type LegacyPrincipal, type LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { StoredObject } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { REDACTED_TOKEN } from '../domain/redaction.ts';
import { lockLicense } from '../licenses/queries.ts';
import { shareUrl } from './present.ts';
import {
  insertSessionRow,
  lockSessionKey,
  lockSessionRow,
  sessionCountOfLicense,
  updateSessionRow,
} from './queries.ts';
import { mergeIntoRecords, type MergedUpload, recordTarget } from './records-merge.ts';
import { ensureSeeded } from './records-seed.ts';
import { indexRowCount } from './findings-index.ts';
import { BESIDE_MIN_ROWS, dropUnpublishedIndex, writerFor } from './index-beside.ts';
import type { CommitResult } from './results.ts';
import type { ScanFacts } from './scan-facts.ts';
import { newShareToken, shareTokenOf } from './share.ts';
import { insertShareToken } from './share-queries.ts';
import { enforceStorageLimits, lockForStorageLimit } from './storage-quota.ts';

export interface CommitInput {
  principal: LicensePrincipal | LegacyPrincipal;
  metadata: SessionMetadata;
  /** The upload's other stored files, already durable in the blob store. */
  files: Partial<Record<SessionFileName, StoredObject>>;
  /**
   * The session file, being stored: a large session's transaction runs meanwhile, and names it
   * in the session row, and commits, only once it is durable; its failure fails the upload.
   */
  results?: Promise<StoredObject>;
  /** Scan time and open findings read from the file. */
  facts: ScanFacts;
  /** The parsed session file, indexed with the rows (sessions/findings.ts). */
  doc?: unknown;
}

const sessionLimitMessage = (max: number) => `Session limit reached (${max})`;

/** docs/findings-of-record.md#session-ids: an id is one scan of one target; another target's upload never replaces it. */
function sessionOfOtherTarget(sessionId: string, held: string, uploaded: string): DomainError {
  const name = (t: string) => (t === '' ? 'no target' : `target ${JSON.stringify(t)}`);
  return new DomainError(
    'conflict.session_target',
    `Session ${sessionId} already holds the scan of ${name(held)}; this upload is of ${name(uploaded)}. Nothing was replaced: upload it under another session id`,
    { extra: { conflict: 'session_target', target: held } },
  );
}

/** docs/findings-of-record.md#session-ids: another run of the scan under the same id never replaces it either. */
function sessionOfOtherRun(sessionId: string, target: string, held: string, uploaded: string): DomainError {
  const name = target === '' ? 'no target' : `target ${JSON.stringify(target)}`;
  return new DomainError(
    'conflict.session_run',
    `Session ${sessionId} already holds another scan run of ${name} (run ${held}); this upload is run ${uploaded}. Nothing was replaced: scan again, or upload it under another session id`,
    { extra: { conflict: 'session_run', target } },
  );
}

/**
 * Make an upload visible: one transaction writes the session row, its share token and the
 * `scan_completed` audit event, and indexes its findings. Until it commits the stored files are unreferenced
 * orphans (removed by the sweep); after it, the session is complete. The upload is merged into
 * the findings of record of its target in the same transaction (records-merge.ts). A re-upload
 * of an existing session id replaces its files within the same client (keeping its share
 * token, review status, history and notes) and is merged like any upload, so no decision is
 * lost; an upload of another target, or of another scan run, under an id the client already
 * holds is refused (409).
 * Session ids are unique per client (docs/api.md#ids-are-per-client): the same id under another
 * client is another session, which this upload neither sees nor touches.
 */
export async function commitSession(ctx: AppContext, input: CommitInput): Promise<CommitResult> {
  const { principal, metadata } = input;
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + ctx.config.sessionRetentionDays * 86_400_000);
  const licenseId = principal.kind === 'license' ? principal.license.id : null;
  const clientId = metadata.client_id ?? NO_CLIENT;
  const ref = { clientId, sessionId: metadata.session_id };
  const target = recordTarget(metadata.target);
  // Only a large session has work enough to hide its file's write: a smaller one waits for it
  // here, so that a slow store never holds the transaction's locks (the key's, the portal's
  // storage total) longer than the transaction's own work would.
  if (input.results !== undefined && indexRowCount(input.doc) < BESIDE_MIN_ROWS) await input.results;
  // The target's triage from before the records, read once from its newest stored file.
  await ensureSeeded(ctx, clientId, target);
  const uploader = { actor: actorOf(principal), mayDecide: principal.permissions.has('remediation:update') };

  // Set when the session's index is written beside the transaction (sessions/index-beside.ts).
  let beside = false;
  const committed = ctx.db.transaction().execute(async (trx) => {
    await lockForStorageLimit(trx, ctx.config);
    if (principal.kind === 'license') {
      // Serialises uploads of one key so two concurrent uploads cannot both take the last slot.
      await lockLicense(trx, principal.license.id);
    }
    // Serialises uploads of one session of one client whatever the credential: FOR UPDATE
    // below locks nothing while the row does not exist yet, so two first uploads of the same
    // id (two keys of a client, or the legacy key) would both insert and one would fail with a 500.
    await lockSessionKey(trx, ref);
    const existing = await lockSessionRow(trx, ref);
    if (existing && recordTarget(existing.target) !== target)
      throw sessionOfOtherTarget(metadata.session_id, recordTarget(existing.target), target);
    // Two scanners of one client that started a scan of one target in the same second (a group
    // schedule): the second upload is another run, refused. A file without a run id is the same run.
    const runId = input.facts.runId ?? null;
    if (existing?.run_id != null && runId !== null && existing.run_id !== runId)
      throw sessionOfOtherRun(metadata.session_id, target, existing.run_id, runId);

    if (!existing && principal.kind === 'license' && principal.license.max_sessions !== null) {
      if ((await sessionCountOfLicense(trx, principal.license.id)) >= principal.license.max_sessions)
        throw new DomainError('forbidden.session_limit', sessionLimitMessage(principal.license.max_sessions));
    }

    // What an upload writes, the same for a new session and a replacement.
    const columns = {
      client: metadata.client,
      target: metadata.target,
      risk_score: metadata.risk_score,
      risk_grade: metadata.risk_grade,
      metadata: JSON.stringify(metadata),
      files: JSON.stringify(input.files),
      uploaded_at: now,
      updated_at: now,
      expires_at: expiresAt,
      expiry_notified_at: null,
      scanned_at: input.facts.scannedAt ?? now,
      run_id: runId ?? existing?.run_id ?? null,
    };
    let shareToken: string | null;
    if (existing) {
      // The session keeps counting against the key that first uploaded it (license_id stays).
      await updateSessionRow(trx, ref, { ...columns, version: existing.version + 1 });
      // A revoked link stays revoked through re-uploads (a scheduled scan re-uploads without
      // asking anyone): only a rotation by an admin or member makes a new one.
      shareToken = await shareTokenOf(trx, ctx.shareTokens, ref);
    } else {
      await insertSessionRow(trx, {
        session_id: metadata.session_id,
        client_id: clientId,
        ...columns,
        license_id: licenseId,
      });
      shareToken = newShareToken();
      // Stored as its hash and a sealed copy; the clear token goes only into this answer.
      await insertShareToken(trx, ref, ctx.shareTokens.seal(shareToken));
    }

    const results = input.results;
    let merged: MergedUpload | null = null;
    if (results !== undefined && input.doc !== undefined) {
      const writer = writerFor(ctx, { newSession: existing === undefined, rows: indexRowCount(input.doc) });
      beside = writer !== null;
      merged = await mergeIntoRecords(trx, {
        ref,
        target,
        file: results,
        doc: input.doc,
        uploader,
        scannedAt: input.facts.scannedAt ?? now,
        now,
        beside: writer,
      });
    }
    const scores = merged?.triage?.scores;
    const files = results === undefined ? null : { ...input.files, 'session_results.json': await results };
    if (scores !== undefined || files !== null)
      await updateSessionRow(trx, ref, {
        ...(scores && { risk_score: scores.risk_score, risk_grade: scores.risk_grade }),
        ...(files && { files: JSON.stringify(files) }),
      });

    await enforceStorageLimits(trx, ctx.config, clientId);

    const link = shareToken === null ? null : shareUrl(ctx.config.baseUrl, shareToken);
    const recorded = await recordAuditEvent(trx, {
      event_type: 'scan_completed',
      actor: actorOf(principal),
      session_id: metadata.session_id,
      client_id: metadata.client_id,
      data: {
        session_id: metadata.session_id,
        client: metadata.client,
        client_id: metadata.client_id,
        target: metadata.target,
        risk_score: scores?.risk_score ?? metadata.risk_score,
        risk_grade: scores?.risk_grade ?? metadata.risk_grade,
        total_findings: metadata.total_findings,
        total_hosts: metadata.total_hosts,
        severity_summary: metadata.severity_summary,
        share_url: link === null ? null : shareUrl(ctx.config.baseUrl, REDACTED_TOKEN),
        uploaded_at: now.toISOString(),
        tool_version: metadata.tool_version,
        replaced: existing !== undefined,
      },
    });
    // Subscribers (webhooks) get the link; the audit row keeps it without the token, which is
    // stored nowhere in clear (share-seal.ts): not in the audit log, its API or a backup.
    const event = link === null ? recorded : { ...recorded, secret_data: { share_url: link } };
    const oldKeys = existing ? Object.values(existing.files).map((f) => f.key) : [];
    return {
      result: {
        sessionId: metadata.session_id,
        shareToken,
        replaced: existing !== undefined,
        findings: merged?.counts ?? null,
      },
      oldKeys,
      event,
    };
  });
  const { result, oldKeys, event } = await committed.catch(async (err: unknown) => {
    // Its index rows may be committed already: dropped under the session's lock, so never another upload's.
    if (beside)
      await dropUnpublishedIndex(ctx.db, ref).catch((e: unknown) =>
        ctx.logger.warn({ err: e }, 'could not drop the findings index of a failed upload; the orphan sweep will'),
      );
    throw err;
  });

  // The replaced version's files are unreferenced now; a failure here leaves orphans for the sweep.
  await ctx.blobs
    .delete(oldKeys)
    .catch((err: unknown) => ctx.logger.warn({ err }, 'could not delete replaced session files'));
  ctx.events.publish(event);
  return result;
}
