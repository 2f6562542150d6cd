import type { FastifyRequest } from 'fastify';
import { NO_CLIENT, parseSessionJson, type SessionFileName, UPLOAD_FIELDS } from '@svc/protocol';
import type { AppContext } from '../../context.ts';
import type { StoredObject } from '../../db/schema.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import { fieldBytes, partsOf } from '../../http/multipart-body.ts';
import type { UploadBodyWatch } from '../../http/upload-body.ts';
import { fileClientId } from '../../sessions/derive.ts';
import { blobPrefix, CONTENT_TYPES } from '../../sessions/files.ts';
import type { DiskReservation } from '../../sessions/storage-quota.ts';
import { type StoreOptions, storeObject } from '../../sessions/storage.ts';

/** What the parts of an upload left: the session JSON as sent, and the other files stored. */
export interface StagedUpload {
  /** The session_json bytes; null until the part arrives. */
  json: Buffer | null;
  /** The parsed session_json: undefined until it arrives, null when it is not JSON. */
  parsed: { doc: unknown } | null | undefined;
  /** The other files, already in the blob store (removed by the caller if nothing commits). */
  files: Partial<Record<SessionFileName, StoredObject>>;
}

/**
 * Reads the upload's parts in order. Files stream to the blob store as they arrive; only the
 * session JSON is held in memory, because it has to be parsed. Unknown fields are read away
 * (newer scanners may send more); a known field sent twice is a 400.
 */
export async function stageParts(
  ctx: AppContext,
  request: FastifyRequest,
  how: { keyClientId: string | null; watch: UploadBodyWatch; reservation: DiskReservation; storing: StoreOptions },
  staged: StagedUpload,
): Promise<void> {
  const { keyClientId, watch, reservation, storing } = how;
  // docs/api.md#ids-are-per-client: files are stored under their client. A key's client is
  // known at once; the legacy key's comes from session_json (our client sends it first),
  // before which files go under a `legacy` directory.
  let storeUnder: string | null = keyClientId;
  for await (const part of partsOf(request, watch.aborted)) {
    watch.checkLimit();
    const name = UPLOAD_FIELDS[part.fieldname];
    const seen = name === 'session_results.json' ? staged.json !== null : name !== undefined && staged.files[name];
    if (name === undefined || seen) {
      if (name !== undefined) throw badRequest(`Field ${part.fieldname} was sent twice`);
      if (part.type === 'file') for await (const _ of watch.guarded(part.file));
      continue;
    }
    if (name === 'session_results.json') {
      const chunks: Buffer[] = [];
      if (part.type === 'file') for await (const chunk of watch.guarded(part.file)) chunks.push(chunk);
      else chunks.push(fieldBytes(part));
      staged.json = Buffer.concat(chunks);
      const read = parseSessionJson(staged.json.toString('utf8'));
      staged.parsed = 'doc' in read ? read : null;
      if (keyClientId === null && staged.parsed) storeUnder = fileClientId(staged.parsed.doc) ?? NO_CLIENT;
      continue;
    }
    const source = part.type === 'file' ? watch.guarded(part.file) : [fieldBytes(part)];
    const put = await storeObject(ctx, blobPrefix(storeUnder, ctx.now()), source, {
      ...storing,
      isCallerError: (err) => err instanceof HttpError,
    });
    staged.files[name] = { ...put, content_type: CONTENT_TYPES[name] };
    reservation.written += put.size;
  }
}
