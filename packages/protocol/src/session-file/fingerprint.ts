import { sha256Hex } from './sha256.ts';

export interface FingerprintInput {
  rule_id: string;
  host: string;
  port?: number | null | undefined;
  protocol?: string | null | undefined;
}

/**
 * The same weakness on the same host and port gives the same fingerprint in every session,
 * whatever its title, severity or evidence say (those change between scanner releases). The
 * hashed text is the JSON array of the parts, versioned (`svc-finding-v1`), so a future rule can never collide with this
 * one; rule id and host are trimmed and the host and protocol lower-cased, since scanners
 * differ in case. A host-level finding has no port and no protocol.
 */
export function findingFingerprint({ rule_id, host, port, protocol }: FingerprintInput): string {
  const parts = [
    'svc-finding-v1',
    rule_id.trim(),
    host.trim().toLowerCase(),
    port === null || port === undefined ? '' : String(port),
    (protocol ?? '').trim().toLowerCase(),
  ];
  return sha256Hex(JSON.stringify(parts));
}
