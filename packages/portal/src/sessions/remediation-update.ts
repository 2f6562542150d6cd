import { setTimeout as sleep } from 'node:timers/promises';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, scopeOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { isDatabaseConflict } from '../db/pool.ts';
import { DomainError } from '../domain/errors.ts';
import type { PersonChange } from '../records/triage.ts';
import { resolveSession } from './access.ts';
import { ensureIndexed } from './findings.ts';
import { rowKeysOf } from './findings-queries.ts';
import { clientIdOut } from './present.ts';
import { recordTarget } from './records-merge.ts';
import type { RemediationChange, RemediationOutcome } from './results.ts';
import { changeRecords } from './triage-change.ts';
import { countsOf } from './triage-counts-queries.ts';
import { summaryOfCounts } from './triage-view.ts';

/**
 * PATCH /api/remediation-update (docs/api.md#sessions) on the findings of record: an item names
 * one finding of the session by fingerprint, or every finding of a title; the change is made on
 * their records (docs/findings-of-record.md), in one transaction holding the target's lock, with
 * one `remediation_updated` audit event. Every session of the target holding a changed finding
 * states the change (its counts move with it). Two updates of one target wait for each other
 * rather than collide; a serialisation failure or deadlock of the database is retried, at most
 * 3 times, then answered 409 (the documented optimistic-locking contract, docs/api.md#sessions).
 */

export const REMEDIATION_MAX_RETRIES = 3;
export const REMEDIATION_CONFLICT_MESSAGE = `Concurrent updates to this session: gave up after ${REMEDIATION_MAX_RETRIES} retries, try again`;

function personChange(item: RemediationChange): PersonChange {
  return {
    status: item.status,
    note: item.note,
    exception: item.exception,
    falsePositive: item.falsePositive,
  };
}

export async function updateRemediation(
  ctx: AppContext,
  principal: UserPrincipal,
  at: { sessionId: string; clientId: string | undefined },
  items: readonly RemediationChange[],
): Promise<RemediationOutcome> {
  const session = await resolveSession(ctx, scopeOf(principal), at.sessionId, at.clientId);
  await ensureIndexed(ctx, session);
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const t = { clientId: session.client_id, target: recordTarget(session.target) };
  const actor = actorOf(principal);

  // Which records each item reaches: its fingerprint, or every finding of its title in the session.
  const rows = await rowKeysOf(ctx.db, ref);
  const keysOf = (item: RemediationChange): string[] =>
    rows
      .filter(
        (r) =>
          r.fingerprint !== null &&
          (item.fingerprint !== undefined ? r.fingerprint === item.fingerprint : r.title === item.title),
      )
      .map((r) => r.fingerprint as string);

  for (let attempt = 0; ; attempt++) {
    try {
      const { outcome, event } = await ctx.db.transaction().execute(async (trx) => {
        const now = ctx.now();
        const reached = items.map(keysOf);
        const result = await changeRecords(
          trx,
          t,
          items.flatMap((item, i) => reached[i]!.map((fingerprint) => ({ fingerprint, change: personChange(item) }))),
          { actor, source: 'person', at: now, sessionId: null },
        );
        const matched = reached.map((keys) => keys.filter((k) => result.outcomes.has(k)).length);
        const unmatched = [
          ...new Set(items.filter((_, i) => matched[i] === 0).map((item) => item.fingerprint ?? item.title ?? '')),
        ];
        const outcomes = [...result.outcomes.values()];
        const changed = outcomes.filter((o) => o.outcome.statusChanged).length;
        const summary = summaryOfCounts(await countsOf(trx, [ref]), now.toISOString().slice(0, 10)).remediation_summary;
        const outcome = { changed, unmatched, matched, summary };
        if (!outcomes.some((o) => o.outcome.changed)) return { outcome, event: null };
        {
          const exceptions = outcomes.flatMap(({ record, outcome }) =>
            outcome.exception === null
              ? []
              : [
                  {
                    fingerprint: record.fingerprint,
                    action: outcome.exception === 'accepted' ? 'created' : outcome.exception,
                    reason: record.exception_reason,
                    expiry: record.exception_expiry,
                  },
                ],
          );
          const event = await recordAuditEvent(trx, {
            event_type: 'remediation_updated',
            actor,
            session_id: ref.sessionId,
            client_id: clientIdOut(ref.clientId),
            data: {
              session_id: ref.sessionId,
              target: t.target,
              changed,
              items: items.map(({ title, fingerprint, status }, i) => ({
                ...(fingerprint === undefined ? { title } : { fingerprint }),
                ...(status === undefined ? {} : { status }),
                matched: matched[i],
              })),
              ...(exceptions.length > 0 ? { exceptions } : {}),
              remediation_summary: summary,
            },
          });
          return { outcome, event };
        }
      });
      if (event !== null) ctx.events.publish(event);
      return outcome;
    } catch (err) {
      if (!isDatabaseConflict(err)) throw err;
      if (attempt >= REMEDIATION_MAX_RETRIES)
        throw new DomainError('conflict.remediation_changed', REMEDIATION_CONFLICT_MESSAGE);
      await sleep(Math.random() * 25 * 2 ** (attempt + 1));
    }
  }
}
