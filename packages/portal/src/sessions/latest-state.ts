import {
  type LatestStateEntry,
  type LatestStateResponse,
  lenient,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { sessionNotFound } from './access.ts';
import { readSessionDocument } from './open-file.ts';
import { clientIdOut } from './present.ts';
import { latestSessionOfTarget, NO_CLIENT } from './queries.ts';

/**
 * The latest state of a target for the next scan (docs/decisions.md, "Issue 22: prior state
 * from the portal"): the client's newest upload of that target and its remediation items as
 * the stored session_results.json holds them (remediation updates rewrite that file).
 */

/** The one client the request is about: the key's own, the one named (within scope), or the single one in scope. */
function clientOf(caller: Principal, named: string | undefined): string {
  const scope = scopeOf(caller);
  if (named !== undefined) {
    if (scope !== null && !scope.includes(named)) throw sessionNotFound();
    return named;
  }
  if (scope !== null && scope.length === 1) return scope[0]!;
  if (scope !== null && scope.length === 0) throw sessionNotFound();
  throw new DomainError('invalid.client_id', 'Missing client_id parameter: name the client whose target is asked for');
}

export function parseTarget(value: unknown): string {
  const target = typeof value === 'string' ? value.trim() : '';
  if (target === '') throw new DomainError('invalid.target', 'Missing target parameter');
  return target;
}

const oneOf = <T extends string>(list: readonly T[], v: unknown): T | null =>
  typeof v === 'string' && (list as readonly string[]).includes(v) ? (v as T) : null;
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function entryOf(item: Record<string, unknown>, ports: ReadonlyMap<string, number>): LatestStateEntry {
  const fp = text(item['fingerprint']);
  const findingId = text(item['finding_id']);
  const exception = oneOf(['accepted', 'expired'] as const, item['exception_status']);
  return {
    fingerprint: fp !== null && /^[0-9a-f]{64}$/.test(fp) ? fp : null,
    title: text(item['title']) ?? '',
    host: text(item['host']),
    port: findingId === null ? null : (ports.get(findingId) ?? null),
    severity: oneOf<Severity>(SEVERITIES, item['severity']),
    status: oneOf<RemediationStatus>(REMEDIATION_STATUSES, item['status']),
    status_changed: text(item['status_changed']),
    note: text(item['note']) ?? '',
    first_seen: text(item['first_seen']),
    prior_status: oneOf<RemediationStatus>(REMEDIATION_STATUSES, item['prior_status']),
    exception_status: exception,
    exception_reason: text(item['exception_reason']),
    exception_approver: text(item['exception_approver']),
    exception_approved_at: text(item['exception_approved_at']),
    exception_expiry: text(item['exception_expiry']),
  };
}

/** The presented state of a parsed session file (pure). */
export function presentLatestState(
  doc: unknown,
  row: { session_id: string; client_id: string; target: string | null; uploaded_at: Date },
): LatestStateResponse {
  const root = lenient.isObj(doc) ? doc : {};
  const ports = new Map<string, number>();
  for (const f of lenient.objs(root['findings'])) {
    const id = text(f['id']);
    const port = f['port'];
    if (id !== null && typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535)
      ports.set(id, port);
  }
  const metadata = lenient.isObj(root['metadata']) ? root['metadata'] : {};
  return {
    session_id: row.session_id,
    client_id: clientIdOut(row.client_id),
    target: row.target ?? '',
    uploaded_at: row.uploaded_at.toISOString(),
    scanned_at: text(metadata['finished_at']),
    remediation: lenient.objs(root['remediation']).map((i) => entryOf(i, ports)),
    remediation_resolved: lenient.objs(root['remediation_resolved']).map((i) => entryOf(i, ports)),
  };
}

/** The client's latest session of `target` (404 when there is none, or the client is out of the caller's scope). */
export async function latestState(
  ctx: AppContext,
  caller: Principal,
  target: string,
  clientId: string | undefined,
): Promise<LatestStateResponse> {
  const client = clientOf(caller, clientId ?? (caller.kind === 'legacy' ? NO_CLIENT : undefined));
  const row = await latestSessionOfTarget(ctx.db, client, target);
  if (row === undefined) throw new DomainError('not_found.session', 'No session of this target');
  const { doc } = await readSessionDocument(ctx, row);
  return presentLatestState(doc, row);
}
