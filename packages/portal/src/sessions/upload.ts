import type { SessionMetadata } from '@svc/protocol';
import { deriveMetadata } from './derive.ts';

export interface UploadedSessionFile {
  /** The parsed session_json. */
  doc: unknown;
  /** Its bytes as sent. */
  json: Buffer;
  /** The uploading key's client; null for the legacy key. */
  keyClientId: string | null;
  hasExecSummary: boolean;
}

/**
 * The metadata of an uploaded session file and the bytes to store. A key's client id is
 * authoritative (docs/api.md#ids-are-per-client): the stored file says so too, so a file naming another client, or
 * none, is stored with the key's; a file with only a top-level session_id gets a metadata
 * block for it. Otherwise the file is stored exactly as sent.
 */
export function acceptSessionFile(u: UploadedSessionFile): { metadata: SessionMetadata; body: Buffer } {
  const metadata = deriveMetadata({ doc: u.doc, keyClientId: u.keyClientId, hasExecSummary: u.hasExecSummary });
  const file = u.doc as { metadata?: unknown };
  if (u.keyClientId === null) return { metadata, body: u.json };
  if (file.metadata === undefined) file.metadata = {};
  const meta = file.metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return { metadata, body: u.json };
  if ((meta as Record<string, unknown>)['client_id'] === u.keyClientId) return { metadata, body: u.json };
  (meta as Record<string, unknown>)['client_id'] = u.keyClientId;
  return { metadata, body: Buffer.from(JSON.stringify(u.doc, null, 2), 'utf8') };
}
