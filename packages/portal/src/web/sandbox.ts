import type { FastifyReply } from 'fastify';

/**
 * Headers for uploaded content (DESIGN 5: uploaded HTML runs in an opaque origin).
 *
 * `sandbox` without `allow-same-origin` gives the document an opaque origin: its scripts
 * run (reports are interactive) but cannot read the portal's cookies, storage or
 * same-origin responses, so a hostile report cannot act as the viewer. Popups may open
 * (the consultation link, the executive summary) and escape the sandbox because they are
 * other documents with their own headers; forms may submit (a report's contact form);
 * downloads, navigation of a framing page and modals are not allowed. Resources: images, styles and fonts inline or over https;
 * scripts inline only; no fetch/XHR/WebSocket anywhere (`default-src 'none'`), so a report
 * cannot phone home with what it shows.
 */
export const HTML_SANDBOX_CSP =
  "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox allow-forms; default-src 'none'; img-src data: https:; style-src 'unsafe-inline' https:; script-src 'unsafe-inline'; font-src data: https:";

/** Non-HTML files (JSON, logs) viewed inline: nothing runs, nothing loads. */
export const INERT_CSP = "sandbox; default-src 'none'";

/**
 * Headers every served session file and share page carries: our content type (never
 * the uploader's), no sniffing, no caching by shared caches or the browser (a share
 * token or a key unlocked it), and no Referer, because the share page's URL holds the
 * token and a report may load https: images.
 */
export function setFileHeaders(reply: FastifyReply, contentType: string): FastifyReply {
  const html = contentType.startsWith('text/html');
  return reply.headers({
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': html ? HTML_SANDBOX_CSP : INERT_CSP,
  });
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
