/** What stored copies show instead of a share token: the audit log's `scan_completed`, the webhook delivery log. */
export const REDACTED_TOKEN = '[redacted]';

/** `text` with every share link's token (64 hex digits after `token=`) redacted. */
export function redactShareTokens(text: string): string {
  return text.replace(/token=[0-9A-Fa-f]{64}/g, `token=${REDACTED_TOKEN}`);
}
