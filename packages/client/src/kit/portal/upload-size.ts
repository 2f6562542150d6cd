import { UPLOAD_LIMIT_BYTES, uploadNotSentMessage } from '@svc/protocol';
import { bodyLength, HttpError, type RequestSpec } from '../http/request.ts';
import { PortalError } from './errors.ts';
import { uploadRequest, type UploadFiles } from './requests.ts';
import type { PortalTarget } from './target.ts';

/**
 * An upload over the portal's limit is refused here, before a byte is sent,
 * with the limit named (the protocol's rule, upload-limit.ts), instead of sending 25 MB to be
 * told 413. The body is measured exactly as it would be sent (multipart framing included), from
 * the files' sizes. `spec` is the upload's request when already built; else it is built from `files`.
 */
export async function checkUploadSize(target: PortalTarget, spec: RequestSpec | UploadFiles): Promise<number> {
  const request = 'method' in spec ? spec : uploadRequest(target, spec);
  const limit = target.uploadLimitBytes ?? UPLOAD_LIMIT_BYTES;
  let bytes: number;
  try {
    bytes = await bodyLength(request.body);
  } catch (err) {
    if (err instanceof HttpError) throw new PortalError('file', err.message);
    throw err;
  }
  if (bytes > limit)
    throw new PortalError('too_large', uploadNotSentMessage(bytes, limit), {
      details: { limit_bytes: limit, body_bytes: bytes },
    });
  return bytes;
}

/** Seconds an upload's answer may take per MB of its body, beyond the call's timeout. */
const UPLOAD_SECONDS_PER_MB = 10;

/**
 * An upload's answer comes once its body is sent and stored, and both grow with its size: a
 * 100,000-finding session (22 MB) takes the portal about 20 s to store on two cores, more on a
 * loaded one. So the call's timeout (`--timeout`, 30 s) is for a small upload, and each MB adds
 * ten seconds: 25 MB may take 280 s before the client gives up (docs/cli/upload.md).
 */
export function uploadTimeoutMs(timeoutMs: number, bodyBytes: number): number {
  return timeoutMs + Math.ceil((bodyBytes / (1024 * 1024)) * UPLOAD_SECONDS_PER_MB * 1000);
}
