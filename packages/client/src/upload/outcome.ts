import fs from 'node:fs';
import { lenient, type UploadResponse } from '@svc/protocol';
import type { PortalError } from '../kit/portal/errors.ts';
import { printable } from '../kit/text/printable.ts';

/**
 * What an upload did, in words, for every command that uploads (svc upload, svc scan --upload,
 * svc import --upload): what the portal merged into the target's findings of record, and why a
 * session was refused when it clashes with another target's (docs/cli/upload.md).
 */

type Counts = NonNullable<UploadResponse['findings']>;

/** "Findings of record: 2 new, 1 reopened, 3 resolved, 4 not checked by this scan"; null when the portal did not say. */
export function findingsOfRecordLine(findings: Counts | undefined): string | null {
  if (findings === undefined) return null;
  const parts = [
    [findings.new, 'new'],
    [findings.persistent, 'still open'],
    [findings.reopened, 'reopened'],
    [findings.resolved, 'resolved'],
    [findings.not_checked, 'not checked by this scan'],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}`);
  return `Findings of record: ${parts.length === 0 ? 'no open finding, none changed' : parts.join(', ')}`;
}

/** The target and id a session file names, read leniently (the portal judged the file already). */
function sessionOf(file: string): { id: string | null; target: string | null } {
  try {
    const doc: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    const meta = lenient.isObj(doc) && lenient.isObj(doc['metadata']) ? doc['metadata'] : {};
    return { id: lenient.str(meta['session_id']), target: lenient.str(meta['target']) };
  } catch {
    return { id: null, target: null };
  }
}

/**
 * The refusal of an upload whose session id the client already holds for another target (409,
 * `conflict: "session_target"`): both targets named, and what to do. Null for any other error,
 * which keeps the portal's own message.
 */
export function sessionTargetConflict(err: PortalError, sessionFile: string): string | null {
  const d = err.details;
  if (err.status !== 409 || d?.['conflict'] !== 'session_target') return null;
  const other = typeof d['target'] === 'string' ? printable(d['target'], { multiline: false }) : 'another target';
  const mine = sessionOf(sessionFile);
  const id = mine.id === null ? 'this session id' : `session ${printable(mine.id, { multiline: false })}`;
  const target = mine.target === null ? 'another target' : `"${printable(mine.target, { multiline: false })}"`;
  return (
    `Upload refused: ${id} is already held on the portal by target "${other}" of this client, and this ` +
    `session scanned ${target}. The portal keeps one session per id and client and did not replace it; ` +
    `scan ${target} again (a new scan takes a free id) and upload that session` +
    (err.portalError === null ? '' : ` (portal: ${err.portalError})`)
  );
}
