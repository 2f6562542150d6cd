import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

/**
 * Headers for uploaded content, served by /api/download, the share page's frame and the
 * console's frame (docs/decisions.md#uploaded-html-runs-sandboxed-and-loads-nothing).
 *
 * `sandbox` without `allow-same-origin` gives the document an opaque origin: its scripts
 * run (reports are interactive) but cannot read the portal's cookies, storage or
 * same-origin responses, so a hostile report cannot act as the viewer. No `allow-forms`
 * (no form submits, on top of `form-action 'none'`), no `allow-popups`, no
 * `allow-top-navigation`: a framed report cannot open windows or navigate the page that
 * frames it. `base-uri 'none'`: a `<base>` cannot re-point relative links.
 *
 * Nothing loads from anywhere: images and fonts as data: URLs, styles and scripts inline,
 * no fetch/XHR/WebSocket/beacon (`default-src 'none'` covers connect-src). A report that
 * draws a fake sign-in form can therefore not send what is typed into it anywhere, not
 * even as an image URL. The project's own reports need nothing else (inline CSS and SVG,
 * the logo as a data: URL).
 */
const REPORT_SOURCES =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'";

/**
 * Everywhere uploaded HTML is shown, the share page's frame included (a
 * pop-up there could carry a typed password out in its address; the consultation button's
 * page is opened by the share page itself, web/consultation.ts).
 */
export const HTML_SANDBOX_CSP = `sandbox allow-scripts; ${REPORT_SOURCES}`;

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
 * token or a key unlocked it), no Referer (the share page's URL holds the token), no DNS
 * prefetching of the hosts a report names, and who may frame it. `htmlCsp` is the policy
 * for HTML (the uploaded-HTML sandbox unless told otherwise).
 */
export function setFileHeaders(
  reply: FastifyReply,
  contentType: string,
  frameAncestors: readonly string[],
  htmlCsp: string = HTML_SANDBOX_CSP,
): FastifyReply {
  const html = contentType.startsWith('text/html');
  const frame = frameHeaders(frameAncestors);
  reply.headers({
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'cache-control': 'private, no-store',
    'referrer-policy': 'no-referrer',
    'x-dns-prefetch-control': 'off',
    'content-security-policy': `${html ? htmlCsp : INERT_CSP}; ${frame.csp}`,
  });
  if (frame.xFrameOptions !== null) reply.header('x-frame-options', frame.xFrameOptions);
  return reply;
}

/** `'sha256-…'` of an inline element's exact text, for a CSP source list. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The portal's own pages around uploaded content (the share page and its summary and error
 * pages): nothing but the given inline style and script elements (by hash), frames from the
 * portal only, no forms, no <base>. `frame-src 'self'` also binds the report's frame: a
 * report that navigates its own frame elsewhere (to a page of its own that would load
 * anything) is refused by the browser.
 */
export function ownPageCsp(inline: { styles: readonly string[]; scripts: readonly string[] }): string {
  const list = (texts: readonly string[]) => (texts.length === 0 ? "'none'" : texts.map(cspHash).join(' '));
  return [
    "default-src 'none'",
    `style-src ${list(inline.styles)}`,
    `script-src ${list(inline.scripts)}`,
    "frame-src 'self'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}
