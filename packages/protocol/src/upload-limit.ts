/**
 * The upload size limit (docs/api.md#sessions: 25 MB), one rule for both sides: the portal
 * counts it over the whole multipart request body and answers 413 past it; the clients (`svc
 * upload`, `svc import --upload`, svcd) measure the body they would send and refuse before
 * sending anything. An operator who changes it sets SVC_UPLOAD_MAX_MB on the portal, and the
 * same setting on the clients (docs/deployment.md "Upload size").
 */

/** The setting's name, the same on the portal and on the clients. */
export const UPLOAD_LIMIT_SETTING = 'SVC_UPLOAD_MAX_MB';
/** The contract's 25 MB. */
export const DEFAULT_UPLOAD_LIMIT_MB = 25;
/** The highest accepted: the session JSON is held in memory and parsed whole (V8 strings stop near 512 MB). */
export const MAX_UPLOAD_LIMIT_MB = 512;

/** MB are binary here, as the contract's 25 MB: 25 x 1024 x 1024 bytes. */
export function uploadLimitBytes(mb: number): number {
  return mb * 1024 * 1024;
}

/** The default limit in bytes: 25 x 1024 x 1024. */
export const UPLOAD_LIMIT_BYTES = uploadLimitBytes(DEFAULT_UPLOAD_LIMIT_MB);

const mbOf = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));

/** The portal's 413: which limit, how much it allows, and the setting that moves it. */
export function uploadTooLargeMessage(limitBytes: number): string {
  return `Upload exceeds ${mbOf(limitBytes)} MB: the whole request may be at most ${limitBytes} bytes (the portal's upload limit, ${UPLOAD_LIMIT_SETTING})`;
}

/** A client's refusal before sending: the same limit, in the same words, and what to do. */
export function uploadNotSentMessage(bodyBytes: number, limitBytes: number): string {
  return (
    `Upload not sent: the request would be ${bodyBytes} bytes (${mbOf(bodyBytes)} MB), over the upload limit of ` +
    `${mbOf(limitBytes)} MB (${limitBytes} bytes, ${UPLOAD_LIMIT_SETTING}); the portal refuses larger uploads with 413. ` +
    `If the portal's operator raised its limit, set ${UPLOAD_LIMIT_SETTING} to the same value here`
  );
}

/** SVC_UPLOAD_MAX_MB as a whole number of MB from 1 to MAX_UPLOAD_LIMIT_MB; null when it is not one. */
export function parseUploadLimitMb(raw: string): number | null {
  const s = raw.trim();
  if (!/^\d{1,6}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= MAX_UPLOAD_LIMIT_MB ? n : null;
}
