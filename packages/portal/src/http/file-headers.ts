import type { FastifyReply } from 'fastify';

/**
 * Headers for uploaded content, served by /api/download and the share page (DESIGN 5:
 * uploaded HTML runs in an opaque origin).
 *
 * `sandbox` without `allow-same-origin` gives the document an opaque origin: its scripts
 * run (reports are interactive) but cannot read the portal's cookies, storage or
 * same-origin responses, so a hostile report cannot act as the viewer. Pop-ups may open
 * (the consultation link, the executive summary) but stay sandboxed: no
 * `allow-popups-to-escape-sandbox`, so a pop-up cannot shed the sandbox and run with its
 * own origin's rights. No `allow-top-navigation`: a framed report cannot navigate the page
 * that frames it. `allow-forms` stays (a report's form may validate itself) but
 * `form-action 'none'` means no form submits anywhere. `base-uri 'none'`: a `<base>`
 * cannot re-point relative links. Resources: images, styles and fonts inline or over
 * https; scripts inline only; no fetch/XHR/WebSocket/beacon anywhere (`default-src 'none'`
 * covers connect-src), so a report cannot phone home with what it shows.
 */
export const HTML_SANDBOX_CSP =
  "sandbox allow-scripts allow-popups allow-forms; default-src 'none'; img-src data: https:; style-src 'unsafe-inline' https:; script-src 'unsafe-inline'; font-src data: https:; form-action 'none'; base-uri 'none'";

/** Non-HTML files (JSON, logs) viewed inline: nothing runs, nothing loads. */
export const INERT_CSP = "sandbox; default-src 'none'";

/**
 * `frame-ancestors` for a configured list (SVC_FRAME_ANCESTORS): nobody by default. The
 * matching X-Frame-Options, for browsers without frame-ancestors: DENY for nobody,
 * SAMEORIGIN for exactly 'self', and none for a list of origins (X-Frame-Options cannot
 * name origins; browsers that know frame-ancestors ignore it anyway).
 */
export function frameHeaders(frameAncestors: readonly string[]): { csp: string; xFrameOptions: string | null } {
  if (frameAncestors.length === 0) return { csp: "frame-ancestors 'none'", xFrameOptions: 'DENY' };
  const only = frameAncestors.length === 1 && frameAncestors[0] === "'self'";
  return { csp: `frame-ancestors ${frameAncestors.join(' ')}`, xFrameOptions: only ? 'SAMEORIGIN' : null };
}

/**
 * Headers every served session file and share page carries: our content type (never
 * the uploader's), no sniffing, no caching by shared caches or the browser (a share
 * token or a key unlocked it), no Referer (the share page's URL holds the token and a
 * report may load https: images), and who may frame it.
 */
export function setFileHeaders(
  reply: FastifyReply,
  contentType: string,
  frameAncestors: readonly string[],
): FastifyReply {
  const html = contentType.startsWith('text/html');
  const frame = frameHeaders(frameAncestors);
  reply.headers({
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
    'referrer-policy': 'no-referrer',
    'content-security-policy': `${html ? HTML_SANDBOX_CSP : INERT_CSP}; ${frame.csp}`,
  });
  if (frame.xFrameOptions !== null) reply.header('x-frame-options', frame.xFrameOptions);
  return reply;
}
