import type { Static } from '@sinclair/typebox';
import type { Finding, RemediationEntry, RemediationStatus } from '@svc/protocol';

/** Types the pipeline stages share; the session file's own types are the protocol's. */

/**
 * A remediation entry. `port` and `protocol` ride beside the protocol's fields (its entries are
 * open objects): the next scan reads where an item is to tell whether it looked there.
 */
export type Remediation = Static<typeof RemediationEntry> & { port?: number; protocol?: string };
export type { Finding, RemediationStatus };

/**
 * A finding as detection rules hand it to the stages: the protocol's model plus `category`,
 * the weakness class the compliance table maps (compliance-map.ts CATEGORIES); it stays in
 * the written finding, an unknown field the protocol allows.
 */
export type ScanFinding = Finding & { category?: string | undefined };

/** A finding after normalisation: it has an id within the session (and a fingerprint when rule_id and host are known). */
export type StageFinding = ScanFinding & { id: string };

/** One discovered host. */
export interface HostInfo {
  ip: string;
  hostname?: string | undefined;
  os_guess?: string | undefined;
  /** Open ports discovery found; when absent, the distinct ports of the host's findings count. */
  open_ports?: readonly number[] | undefined;
}

/** The address a finding is on (`host`, else the older `ip`), or null. */
export function hostOf(f: Finding): string | null {
  const h =
    typeof f.host === 'string' && f.host.trim() !== ''
      ? f.host
      : typeof f.ip === 'string' && f.ip.trim() !== ''
        ? f.ip
        : null;
  return h === null ? null : h.trim();
}
