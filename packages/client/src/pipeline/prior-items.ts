import { type FindingPlace, isFingerprint, lenient, REMEDIATION_STATUSES, severityOf } from '@svc/protocol';
import type { Remediation, RemediationStatus } from './types.ts';

/**
 * The remediation items of a prior session file as the tracking stage reads them
 * (remediation.ts): which are open, which were resolved, where each one is, and the fields a
 * later entry carries over from it. Pure and lenient: a prior file is whatever an older
 * scanner, the portal or a person wrote.
 */

export type PriorItem = Record<string, unknown>;

export interface PriorItems {
  /** Open items: `.remediation[]`, then `.remediation_not_checked[]` (open items the prior did not look at). */
  open: PriorItem[];
  /** The open items that came from `.remediation_not_checked[]`: the prior session did not see them either. */
  unseen: ReadonlySet<PriorItem>;
  /** `.remediation_resolved[]`: seen again, an item is reopened. */
  resolved: PriorItem[];
  /** The prior session's id, or null. */
  sessionId: string | null;
  /** Where an item is (placeOf). */
  place: (item: PriorItem) => FindingPlace;
  /** The rule that found it: the item's own `rule_id`, else its finding's (by finding_id); null when neither says. */
  rule: (item: PriorItem) => string | null;
}

export const statusOf = (v: unknown): RemediationStatus | null =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v) ? (v as RemediationStatus) : null;

const portOf = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535 ? v : null;

export function priorSessionId(prior: unknown): string | null {
  if (!lenient.isObj(prior)) return null;
  const metadata = lenient.isObj(prior['metadata']) ? prior['metadata'] : {};
  return lenient.str(metadata['session_id']) ?? lenient.str(prior['session_id']);
}

/** The target a prior session file names (metadata.target, else the older top-level target), or null. */
export function priorTarget(prior: unknown): string | null {
  if (!lenient.isObj(prior)) return null;
  const metadata = lenient.isObj(prior['metadata']) ? prior['metadata'] : {};
  return lenient.str(metadata['target']) ?? lenient.str(prior['target']);
}

export function priorItems(prior: unknown): PriorItems {
  const doc = lenient.isObj(prior) ? prior : {};
  const findings = new Map<string, PriorItem>();
  for (const f of lenient.objs(doc['findings'])) {
    const id = lenient.str(f['id']);
    if (id !== null && !findings.has(id)) findings.set(id, f);
  }
  const unseen = lenient.objs(doc['remediation_not_checked']);
  return {
    open: [...lenient.objs(doc['remediation']), ...unseen],
    unseen: new Set(unseen),
    resolved: lenient.objs(doc['remediation_resolved']),
    sessionId: priorSessionId(prior),
    place: (item) => placeOf(item, findings),
    rule: (item) => {
      const id = lenient.str(item['finding_id']);
      return lenient.str(item['rule_id']) ?? lenient.str((id === null ? undefined : findings.get(id))?.['rule_id']);
    },
  };
}

/**
 * Where a prior item is: its own host, port and protocol when it states a port (the portal's
 * items and this scanner's since coverage, with `port: null` for a host-level finding), else
 * those of its finding in the prior file (by finding_id), else its host alone. An item of an
 * older file whose finding cannot be found is taken as host-level: the host answering is
 * enough to resolve it, as older scanners did.
 */
function placeOf(item: PriorItem, findings: ReadonlyMap<string, PriorItem>): FindingPlace {
  const id = lenient.str(item['finding_id']);
  const finding = id === null ? undefined : findings.get(id);
  const host = lenient.str(item['host']) ?? lenient.str(finding?.['host']) ?? lenient.str(finding?.['ip']);
  if (Object.hasOwn(item, 'port')) return { host, port: portOf(item['port']), protocol: lenient.str(item['protocol']) };
  return {
    host,
    port: portOf(finding?.['port']),
    protocol: lenient.str(item['protocol']) ?? lenient.str(finding?.['protocol']),
  };
}

/** The fields that say where an entry is, for the next scan (beside the documented remediation fields). */
export function placeFields(place: FindingPlace): Pick<Remediation, 'host' | 'port' | 'protocol'> {
  return {
    ...(place.host === null ? {} : { host: place.host }),
    ...(place.port === null ? {} : { port: place.port }),
    ...(place.port === null || place.protocol === null ? {} : { protocol: place.protocol }),
  };
}

const DISPOSITION_FIELDS = ['disposition', 'disposition_reason', 'disposition_by', 'disposition_at'] as const;
const EXCEPTION_FIELDS = [
  'exception_status',
  'exception_reason',
  'exception_approver',
  'exception_approved_at',
  'exception_expiry',
  'exception_expired',
  'exception_source',
  'exception_claimed_approver',
] as const;

/** The fields of `item` among `keys` that it has, as they are. */
function pick(item: PriorItem, keys: readonly string[]): Partial<Remediation> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (item[k] !== undefined) out[k] = item[k];
  return out as Partial<Remediation>;
}

/**
 * A false-positive disposition, carried from the item it was set on (the portal sets it; the
 * scanner never does): one not set, or set to something unknown, carries nothing.
 */
export function dispositionOf(item: PriorItem): Partial<Remediation> {
  return item['disposition'] === 'false_positive' ? pick(item, DISPOSITION_FIELDS) : {};
}

/** Who set a carried status (in_progress, deferred): the prior's word for it. */
export function statusSourceOf(item: PriorItem): Partial<Remediation> {
  return pick(item, ['status_source', 'status_by']);
}

/**
 * An item that stays open without being looked at: as it was, from status to exception and
 * disposition. `seenIn` is the session it was last seen in when the item does not say (the
 * prior session for its `.remediation[]`, unknown for its `.remediation_not_checked[]`).
 */
export function notCheckedEntry(
  item: PriorItem,
  place: FindingPlace,
  priorId: string | null,
  seenIn: string | null,
): Remediation {
  const sev = severityOf(item['severity']);
  const fp = lenient.str(item['fingerprint']);
  const status = statusOf(item['status']) ?? 'new';
  const firstSeen = lenient.str(item['first_seen']) ?? priorId;
  const lastSeen = lenient.str(item['last_seen']) ?? seenIn;
  return {
    title: lenient.str(item['title']) ?? '',
    ...(sev === null ? {} : { severity: sev }),
    ...(item['kev'] === true ? { kev: true } : {}),
    ...(typeof item['epss'] === 'number' ? { epss: item['epss'] } : {}),
    ...(isFingerprint(fp) ? { fingerprint: fp } : {}),
    ...placeFields(place),
    status,
    ...(lenient.str(item['status_changed']) === null ? {} : { status_changed: item['status_changed'] as string }),
    note: typeof item['note'] === 'string' ? item['note'] : '',
    ...(firstSeen === null ? {} : { first_seen: firstSeen }),
    prior_status: statusOf(item['status']),
    ...statusSourceOf(item),
    ...pick(item, EXCEPTION_FIELDS),
    ...dispositionOf(item),
    ...(lastSeen === null ? {} : { last_seen: lastSeen }),
    ...pick(item, ['reopened_at']),
  };
}
