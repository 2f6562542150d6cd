import { findingFingerprint } from './fingerprint.ts';
import { type Obj, objs } from './read.ts';

/**
 * Which remediation entry belongs to which finding of a session file: one rule for the
 * portal's findings index (packages/portal/src/sessions/findings-index.ts) and for the exports
 * (../exports/), so the status and exception a console row shows are the ones an export carries.
 */

/** A finding's fingerprint: its own, else computed from rule, host, port and protocol; undefined without rule or host. */
export function fingerprintOfFinding(f: Obj): string | undefined {
  if (typeof f['fingerprint'] === 'string') return f['fingerprint'];
  const host = typeof f['host'] === 'string' ? f['host'] : typeof f['ip'] === 'string' ? f['ip'] : undefined;
  if (typeof f['rule_id'] !== 'string' || host === undefined) return undefined;
  return findingFingerprint({
    rule_id: f['rule_id'],
    host,
    port: typeof f['port'] === 'number' ? f['port'] : null,
    protocol: typeof f['protocol'] === 'string' ? f['protocol'] : null,
  });
}

export interface Tracked {
  entry: Obj;
  resolved: boolean;
  by: 'fingerprint' | 'title';
}

/**
 * How PATCH /api/remediation-update reaches a finding's entry (sessions/remediation.ts):
 * by fingerprint when an entry carries the finding's fingerprint, names it by finding_id,
 * or is the only entry of its title on its host; else by title, which changes every entry
 * of that title.
 */
export function trackerOf(doc: Obj, findings: Obj[]): (f: Obj, fp: string | undefined) => Tracked | null {
  const all = [
    ...objs(doc['remediation']).map((entry) => ({ entry, resolved: false })),
    ...objs(doc['remediation_resolved']).map((entry) => ({ entry, resolved: true })),
  ];
  const byFingerprint = new Map<string, (typeof all)[number]>();
  const byFindingId = new Map<string, (typeof all)[number]>();
  const byTitleHost = new Map<string, (typeof all)[number]>();
  const byTitle = new Map<string, (typeof all)[number]>();
  const key = (title: unknown, host: unknown) => JSON.stringify([title, host]);
  for (const e of all) {
    const fp = e.entry['fingerprint'];
    if (typeof fp === 'string') {
      if (!byFingerprint.has(fp)) byFingerprint.set(fp, e);
    } else if (typeof e.entry['finding_id'] === 'string') {
      if (!byFindingId.has(e.entry['finding_id'])) byFindingId.set(e.entry['finding_id'], e);
    } else if (e.entry['host'] !== undefined && !byTitleHost.has(key(e.entry['title'], e.entry['host'])))
      byTitleHost.set(key(e.entry['title'], e.entry['host']), e);
    if (typeof e.entry['title'] === 'string' && !byTitle.has(e.entry['title'])) byTitle.set(e.entry['title'], e);
  }
  // An entry matched by title and host reaches its finding only when that finding is the only
  // one of the pair (counted only when an entry is matched that way: a key per finding is not free).
  const pairs = new Map<string, number>();
  if (byTitleHost.size > 0)
    for (const f of findings) {
      const k = key(f['title'], f['host'] ?? f['ip']);
      pairs.set(k, (pairs.get(k) ?? 0) + 1);
    }
  const byPair = (f: Obj) => {
    if (byTitleHost.size === 0) return undefined;
    const k = key(f['title'], f['host'] ?? f['ip']);
    return pairs.get(k) === 1 ? byTitleHost.get(k) : undefined;
  };
  return (f, fp) => {
    if (fp !== undefined) {
      const own =
        byFingerprint.get(fp) ?? (typeof f['id'] === 'string' ? byFindingId.get(f['id']) : undefined) ?? byPair(f);
      if (own !== undefined) return { ...own, by: 'fingerprint' };
    }
    const title = typeof f['title'] === 'string' ? f['title'] : typeof f['rule_id'] === 'string' ? f['rule_id'] : null;
    const same = title === null ? undefined : byTitle.get(title);
    return same === undefined ? null : { ...same, by: 'title' };
  };
}
