import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { processAlive } from '@svc/protocol/node';

/**
 * Every object and staging file carries the tag of the process that wrote it:
 * `<host>.<pid>.<nonce>`. A sweep can then remove a crashed writer's leftovers at once
 * (same host, process gone, or same pid reused after a restart, as pid 1 in a container
 * always is) without touching a live replica's upload in flight on shared storage.
 */
const HOST = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);
const NONCE = randomBytes(4).toString('hex');
export const OWNER_TAG = `${HOST}.${process.pid}.${NONCE}`;

/** True when the tag names a writer that certainly no longer runs. */
export function writerIsGone(tag: string): boolean {
  const [host, pidText, nonce] = tag.split('.');
  if (host !== HOST || pidText === undefined || nonce === undefined) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid)) return false;
  if (pid === process.pid) return nonce !== NONCE;
  return !processAlive(pid);
}
