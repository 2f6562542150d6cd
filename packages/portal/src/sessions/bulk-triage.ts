import { type AuditEvent, BULK_MAX_FINDINGS, type BulkBody, type BulkResponse } from '@svc/protocol';
import { recordAuditEvents } from '../audit/record.ts';
import { actorOf, scopeOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { keysOfFingerprints, selectedKeys } from '../records/portfolio-queries.ts';
import { selectionOf } from '../records/portfolio.ts';
import { clientIdOut } from './present.ts';
import { parseBulkChange } from './remediation.ts';
import { changeRecords } from './triage-change.ts';

/**
 * One request that changes many findings of record (POST /api/findings/bulk,
 * docs/findings-of-record.md#bulk-changes): chosen by fingerprints within a client (and target),
 * or by the filters of GET /api/findings; the same status, note, exception or disposition for
 * each; one transaction, one `remediation_updated` audit event per finding changed. Targets are
 * locked in a fixed order, so two bulk changes never deadlock.
 */

const bad = (message: string) => new DomainError('invalid.bulk_change', message);

type Key = { client_id: string; target: string; fingerprint: string };

async function selectionKeys(ctx: AppContext, user: UserPrincipal, body: BulkBody, today: string) {
  const scope = scopeOf(user);
  if ((body.fingerprints === undefined) === (body.filter === undefined))
    throw bad('Give exactly one of fingerprints and filter');
  if (body.filter !== undefined) {
    if (body.client_id !== undefined || body.target !== undefined)
      throw bad('client_id and target go inside filter when the findings are chosen by filter');
    const keys = await selectedKeys(ctx.db, selectionOf(body.filter, scope, today), BULK_MAX_FINDINGS);
    if (keys.length > BULK_MAX_FINDINGS)
      throw bad(`The filter reaches more than ${BULK_MAX_FINDINGS} findings: narrow it`);
    return { keys, unmatched: [] as string[] };
  }
  const fingerprints = [...new Set(body.fingerprints ?? [])];
  const client = body.client_id ?? (scope !== null && scope.length === 1 ? scope[0] : undefined);
  if (client === undefined) throw bad('Missing client_id: name the client whose findings these are');
  // Outside the caller's scope, a client's findings are not there at all.
  const keys =
    scope !== null && !scope.includes(client)
      ? []
      : await keysOfFingerprints(ctx.db, client, body.target, fingerprints);
  const found = new Set(keys.map((k) => k.fingerprint));
  return { keys, unmatched: fingerprints.filter((f) => !found.has(f)) };
}

export async function bulkChange(ctx: AppContext, user: UserPrincipal, body: BulkBody): Promise<BulkResponse> {
  const now = ctx.now();
  const today = now.toISOString().slice(0, 10);
  const change = parseBulkChange(body.change, today);
  const { keys, unmatched } = await selectionKeys(ctx, user, body, today);
  const groups = new Map<string, Key[]>();
  for (const k of keys) {
    const g = JSON.stringify([k.client_id, k.target]);
    const list = groups.get(g);
    if (list === undefined) groups.set(g, [k]);
    else list.push(k);
  }
  const actor = actorOf(user);
  const { changed, events } = await ctx.db.transaction().execute(async (trx) => {
    let changedCount = 0;
    const audit = [];
    for (const g of [...groups.keys()].sort()) {
      const [clientId, target] = JSON.parse(g) as [string, string];
      const items = groups.get(g)!.map((k) => ({ fingerprint: k.fingerprint, change }));
      const result = await changeRecords(trx, { clientId, target }, items, {
        actor,
        source: 'person',
        at: now,
        sessionId: null,
      });
      for (const { record, outcome } of result.outcomes.values()) {
        if (!outcome.changed) continue;
        changedCount++;
        audit.push({
          event_type: 'remediation_updated' as const,
          actor,
          client_id: clientIdOut(clientId),
          data: {
            bulk: true,
            client_id: clientIdOut(clientId),
            target,
            fingerprint: record.fingerprint,
            title: record.title,
            ...(change.status === undefined ? {} : { status: record.status }),
            ...(change.note === undefined ? {} : { note: record.note }),
            ...(outcome.exception === null
              ? {}
              : {
                  exceptions: [
                    {
                      fingerprint: record.fingerprint,
                      action: outcome.exception === 'accepted' ? 'created' : outcome.exception,
                      reason: record.exception_reason,
                      expiry: record.exception_expiry,
                    },
                  ],
                }),
            ...(change.falsePositive === undefined ? {} : { disposition: record.disposition }),
          },
        });
      }
    }
    return { changed: changedCount, events: await recordAuditEvents(trx, audit) };
  });
  for (const e of events as AuditEvent[]) ctx.events.publish(e);
  return { success: true, matched: keys.length, changed, unmatched };
}
