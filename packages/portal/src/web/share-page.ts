import { pipeline, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { Type } from '@sinclair/typebox';
import { ShareQuery } from '@svc/protocol';
import type { FastifyReply } from 'fastify';
import type { App, AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { HTML_SANDBOX_CSP, ownPageCsp, setFileHeaders } from '../http/file-headers.ts';
import { openSessionFile } from '../sessions/open-file.ts';
import { fileNamesOf } from '../sessions/present.ts';
import type { SessionRow } from '../sessions/queries.ts';
import { findSharedSession, parseShareToken } from '../sessions/share.ts';
import type { SharedTriage } from '../sessions/results.ts';
import { sharedTriage } from '../sessions/shared-triage.ts';
import { bridgeInserter, bridgeScript } from './bridge.ts';
import { consultationLink } from './consultation.ts';

/**
 * The share page, `{base_url}/share/?token=<64 hex>` (docs/api.md#sessions).
 *
 * With a report.html the page is ours: a fixed bar that says whose scanner report this is
 * and that the portal never asks for a password there, and below it the report in a frame
 * sandboxed twice (the iframe's `sandbox="allow-scripts"` and the served sandbox CSP), from
 * `/share/frame?token=&file=`. So the report never is the top-level document: it cannot
 * navigate the tab (no allow-top-navigation), cannot navigate its own frame away from the
 * portal (this page's `frame-src 'self'`), cannot open a window (no allow-popups: a pop-up's
 * address could carry what was typed into a fake sign-in form), cannot
 * submit a form (no allow-forms, `form-action 'none'`), cannot load anything from elsewhere
 * (its CSP), and cannot remove or cover the bar (another document). The bar switches the
 * frame to the executive summary when there is one.
 *
 * `/share/frame` serves report.html with the bridge script (bridge.ts) inserted at its last
 * closing body tag, streamed from storage (only the report's last 64 KiB are held to find
 * that tag, so memory per view does not grow with the report), or exec_summary.html as
 * stored; framed by the portal's own pages and SVC_FRAME_ANCESTORS only. On the bridge's
 * consultation message the page opens `/share/consultation?token=` (the contact the stored
 * report names, consultation.ts) and passes the message on to a page of the portal's origin
 * that frames it.
 *
 * With only an executive summary, the frame shows that. Without either: a small summary
 * page of ours. Every answer: nosniff, no caching, no
 * Referer, `X-Robots-Tag: noindex`. Missing or malformed token: 400 page; unknown token:
 * 404 page. `/share` redirects to `/share/` so that the page's relative links
 * (`frame?...`, `../api/download?...`) resolve under any base path.
 */

const HTML = 'text/html; charset=utf-8';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const htmlBody = Type.Unsafe<string | Buffer | Readable>(Type.String({ description: 'an HTML page' }));
const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: htmlBody } } });

const PAGE_STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1a1a2e}table{border-collapse:collapse}td,th{padding:.25rem .75rem .25rem 0;text-align:left}';

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>${PAGE_STYLE}</style></head>
<body>
${body}
</body>
</html>
`;
}

/** The summary and error pages: our markup, one inline style, no script. */
const PAGE_CSP = ownPageCsp({ styles: [PAGE_STYLE], scripts: [] });

function sendPage(reply: FastifyReply, ctx: AppContext, status: number, html: string): FastifyReply {
  return setFileHeaders(reply.code(status), HTML, ctx.config.frameAncestors, PAGE_CSP)
    .header('x-robots-tag', 'noindex')
    .send(html);
}

/** The files the share page frames. */
const FRAMED_FILES = ['report.html', 'exec_summary.html'] as const;
type FramedFile = (typeof FRAMED_FILES)[number];

const FRAME_STYLE =
  'html,body{height:100%;margin:0}body{display:flex;flex-direction:column;font:14px/1.4 system-ui,sans-serif;color:#1a1a2e}' +
  '#svc-share-label{flex:none;background:#1a1a2e;color:#fff;padding:8px 12px;border-bottom:3px solid #f6b93b}' +
  '#svc-share-label p{margin:0}#svc-share-label .meta{opacity:.85;font-size:13px;margin-top:2px}' +
  '#svc-share-label .triage{font-size:13px;margin-top:4px}#svc-share-label .changed{font-size:13px;margin-top:4px;color:#f6b93b}' +
  '#svc-share-label button{font:inherit;font-size:13px;margin:6px 6px 0 0;padding:2px 10px;border:1px solid #fff;border-radius:3px;background:transparent;color:#fff;cursor:pointer}' +
  '#svc-share-label button[aria-pressed=true]{background:#fff;color:#1a1a2e}' +
  '#svc-report{flex:1;width:100%;border:0}';

/**
 * Switches the frame between the documents. On the bridge's consultation message (only that
 * message, only from the frame) it opens the consultation page, whose address is fixed here
 * (nothing of the message goes into it), and passes the message on, rebuilt, to a page of
 * the portal's origin that frames this one.
 */
const FRAME_SCRIPT = `(function () {
  'use strict';
  var root = document.documentElement;
  var frame = document.getElementById('svc-report');
  var buttons = document.querySelectorAll('#svc-share-label button[data-src]');
  buttons.forEach(function (b) {
    b.addEventListener('click', function () {
      frame.src = b.getAttribute('data-src');
      frame.title = b.textContent;
      buttons.forEach(function (o) { o.setAttribute('aria-pressed', String(o === b)); });
    });
  });
  window.addEventListener('message', function (e) {
    if (e.source !== frame.contentWindow) return;
    var d = e.data;
    if (!d || d.type !== 'svc-share:schedule-consultation' || d.session_id !== root.getAttribute('data-session')) return;
    var consultation = root.getAttribute('data-consultation');
    if (consultation) window.open(consultation, '_blank', 'noopener');
    if (window.parent === window) return;
    window.parent.postMessage({ type: d.type, session_id: d.session_id }, root.getAttribute('data-portal-origin'));
  });
})();`;

const FRAME_PAGE_CSP = ownPageCsp({ styles: [FRAME_STYLE], scripts: [FRAME_SCRIPT] });

function frameLink(token: string, file: FramedFile): string {
  return escapeHtml(`frame?${new URLSearchParams({ token, file }).toString()}`);
}

/** Relative to /share/, like the frame's links; only when there is a report to read the contact from. */
const consultationAttribute = (row: SessionRow, token: string) =>
  row.files['report.html'] === undefined
    ? ''
    : ` data-consultation="${escapeHtml(`consultation?${new URLSearchParams({ token }).toString()}`)}"`;

const day = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The session's numbers as its triage stands today, and, when a finding changed after the
 * report was stored, that the report's own figures are older (docs/findings-of-record.md#the-share-page).
 */
function triageLines(shared: SharedTriage): string {
  const t = shared.summary;
  if (t === null) return '';
  const s = t.scores;
  const parts = [
    `actual risk ${s.risk_score} (${s.risk_grade})`,
    `operational risk ${s.risk_score_operational} (${s.risk_grade_operational})`,
    `${t.remediation_summary.total - t.remediation_summary.resolved_count} open`,
    `${t.remediation_summary.resolved_count} resolved`,
    `${t.exception_summary.by_status.accepted} accepted ${t.exception_summary.by_status.accepted === 1 ? 'exception' : 'exceptions'}`,
    `${t.disposition_summary.false_positive} false ${t.disposition_summary.false_positive === 1 ? 'positive' : 'positives'}`,
  ];
  const now = `<p class="triage" id="svc-share-triage"><strong>Current triage, ${escapeHtml(day(shared.asOf))}:</strong> ${escapeHtml(parts.join(' · '))}</p>`;
  if (shared.changedSince === null) return now;
  return `${now}
<p class="changed" id="svc-share-triage-changed">This report was generated on ${escapeHtml(day(shared.reportAt))}; its findings were triaged since (last on ${escapeHtml(day(shared.changedSince))}). The report shows the figures as generated; the line above is current.</p>`;
}

/** The page around a session's report: the label bar and the sandboxed frame. */
export function framePage(row: SessionRow, token: string, baseUrl: string, shared: SharedTriage): string {
  // The client's name as the scanner wrote it (share links never show the client id).
  const uploader = row.client === null || row.client === '' ? '' : ` uploaded by ${escapeHtml(row.client)}`;
  const meta = [row.target, `uploaded ${row.uploaded_at.toISOString().slice(0, 10)}`]
    .filter((v): v is string => v !== null && v !== '')
    .map(escapeHtml)
    .join(' · ');
  const shown: FramedFile = row.files['report.html'] !== undefined ? 'report.html' : 'exec_summary.html';
  const buttons = FRAMED_FILES.every((f) => row.files[f] !== undefined)
    ? `<p><button type="button" data-src="${frameLink(token, 'report.html')}" aria-pressed="true">Report</button><button type="button" data-src="${frameLink(token, 'exec_summary.html')}" aria-pressed="false">Executive summary</button></p>`
    : '';
  return `<!DOCTYPE html>
<html lang="en" data-session="${escapeHtml(row.session_id)}" data-portal-origin="${escapeHtml(new URL(baseUrl).origin)}"${consultationAttribute(row, token)}>
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Scan report ${escapeHtml(row.session_id)}</title>
<style>${FRAME_STYLE}</style></head>
<body>
<header id="svc-share-label" role="note" aria-label="About this report">
<p><strong>Scanner report${uploader}</strong> — the content below is not part of the portal; the portal never asks for your password here.</p>
<p class="meta">${meta}</p>
${triageLines(shared)}
${buttons}
</header>
<iframe id="svc-report" title="${shown === 'report.html' ? 'Report' : 'Executive summary'}" src="${frameLink(token, shown)}" sandbox="allow-scripts" referrerpolicy="no-referrer"></iframe>
<script>${FRAME_SCRIPT}</script>
</body>
</html>
`;
}

function viewLink(row: SessionRow, token: string, file: string): string {
  const q = new URLSearchParams({ session: row.session_id, file, mode: 'view', token });
  return `../api/download?${escapeHtml(q.toString())}`;
}

/** The page for a session without report.html: what /api/share answers, as HTML, with its current triage. */
export function summaryPage(row: SessionRow, token: string, shared: SharedTriage): string {
  const m = row.metadata;
  const t = shared.summary;
  const cell = (v: string | number | null) => (v === null ? '<td>–</td>' : `<td>${escapeHtml(String(v))}</td>`);
  const severities = (['critical', 'high', 'medium', 'low', 'info'] as const)
    .map((s) => `${s} ${m.severity_summary[s]}`)
    .join(', ');
  const files = fileNamesOf(row)
    .map(
      (f) =>
        `<li><a href="${viewLink(row, token, f)}" target="_blank" rel="noopener noreferrer">${escapeHtml(f)}</a></li>`,
    )
    .join('\n');
  return page(
    `Scan report ${row.session_id}`,
    `<h1>Shared scan report</h1>
<p>This session has no HTML report; here is its summary.</p>
<table>
<tr><th>Session</th>${cell(row.session_id)}</tr>
<tr><th>Client</th>${cell(row.client)}</tr>
<tr><th>Target</th>${cell(row.target)}</tr>
<tr><th>Risk score</th>${cell(t?.scores.risk_score ?? row.risk_score)}</tr>
<tr><th>Risk grade</th>${cell(t?.scores.risk_grade ?? row.risk_grade)}</tr>
<tr><th>Operational risk</th>${cell(t === null ? m.exception_summary.risk_score_operational : `${t.scores.risk_score_operational} (${t.scores.risk_grade_operational})`)}</tr>
<tr><th>Accepted exceptions</th>${cell(t?.exception_summary.by_status.accepted ?? m.exception_summary.by_status.accepted)}</tr>
<tr><th>False positives</th>${cell(t?.disposition_summary.false_positive ?? 0)}</tr>
<tr><th>Triage as of</th>${cell(day(shared.asOf))}</tr>
<tr><th>Findings</th>${cell(m.total_findings)}</tr>
<tr><th>Hosts</th>${cell(m.total_hosts)}</tr>
<tr><th>By severity</th>${cell(severities)}</tr>
<tr><th>Uploaded</th>${cell(row.uploaded_at.toISOString())}</tr>
</table>
<h2>Files</h2>
<ul>
${files}
</ul>`,
  );
}

/** The token of a share link; null when it is missing or malformed (a 400 page). */
function shareToken(raw: string | undefined): string | null {
  try {
    return parseShareToken(raw, { required: true }) ?? null;
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'invalid') return null;
    throw err;
  }
}

export function registerSharePage(app: App, ctx: AppContext): void {
  app.get('/share', { schema: { hide: true } }, async (request, reply) => {
    const at = request.url.indexOf('?');
    return reply.redirect(`share/${at === -1 ? '' : request.url.slice(at)}`, 301);
  });

  app.get(
    '/share/',
    {
      schema: {
        hide: true,
        querystring: ShareQuery,
        response: {
          200: htmlResponse('the report with the bridge, or a summary'),
          400: htmlResponse('invalid share link'),
          404: htmlResponse('unknown share link'),
        },
      },
      // Also on an answer the error handler writes (a query the schema refuses).
      onRequest: async (_request, reply) => {
        void reply.header('x-robots-tag', 'noindex');
      },
    },
    async (request, reply) => {
      const token = shareToken(request.query.token);
      if (token === null)
        return sendPage(
          reply,
          ctx,
          400,
          page(
            'Invalid share link',
            '<h1>Invalid share link</h1><p>The link is incomplete or malformed. Ask the sender for the full link.</p>',
          ),
        );
      const row = await findSharedSession(ctx, token);
      const notFoundPage = () =>
        sendPage(
          reply,
          ctx,
          404,
          page(
            'Share link not found',
            '<h1>Share link not found</h1><p>This shared report does not exist or has expired.</p>',
          ),
        );
      if (row === undefined) return notFoundPage();

      const shared = await sharedTriage(ctx, row);
      // A session with no HTML report: the summary page (its files are JSON and logs).
      if (FRAMED_FILES.every((f) => row.files[f] === undefined))
        return sendPage(reply, ctx, 200, summaryPage(row, token, shared));
      return setFileHeaders(reply, HTML, ctx.config.frameAncestors, FRAME_PAGE_CSP)
        .header('x-robots-tag', 'noindex')
        .send(framePage(row, token, ctx.config.baseUrl, shared));
    },
  );

  // Framed by the share page (the portal's own origin) and whoever may frame that page.
  const frameAncestors = ["'self'", ...ctx.config.frameAncestors.filter((a) => a !== "'self'")];
  app.get<{ Querystring: { token?: string; file?: string } }>(
    '/share/frame',
    {
      schema: {
        hide: true,
        querystring: {
          type: 'object',
          properties: { token: { type: 'string', maxLength: 128 }, file: { type: 'string', maxLength: 64 } },
          additionalProperties: false,
        },
        response: {
          200: htmlResponse('report.html with the bridge, or exec_summary.html'),
          400: htmlResponse('invalid link'),
          404: htmlResponse('unknown share link or file'),
        },
      },
      onRequest: async (_request, reply) => {
        void reply.header('x-robots-tag', 'noindex');
      },
    },
    async (request, reply) => {
      const headers = (status: number) =>
        setFileHeaders(reply.code(status), HTML, frameAncestors, HTML_SANDBOX_CSP).header('x-robots-tag', 'noindex');
      const file =
        request.query.file === undefined ? 'report.html' : FRAMED_FILES.find((f) => f === request.query.file);
      const token = shareToken(request.query.token);
      if (token === null) return headers(400).send(page('Invalid share link', '<h1>Invalid share link</h1>'));
      if (file === undefined) return headers(400).send(page('Invalid link', '<h1>Unknown file</h1>'));
      const row = await findSharedSession(ctx, token);
      const opened = row === undefined ? null : await openSessionFile(ctx, row, file);
      if (opened === null) return headers(404).send(page('Not found', '<h1>This file is not available</h1>'));
      if (file === 'exec_summary.html') {
        headers(200).header('content-length', String(opened.size));
        return reply.send(opened.stream);
      }
      const bridge = bridgeScript({ sessionId: opened.row.session_id, baseUrl: ctx.config.baseUrl });
      // The bridge goes in exactly once, so the length is known before the first byte.
      // pipeline: a storage read error destroys the response, a closed response the read.
      const body = pipeline(opened.stream, bridgeInserter(bridge), () => {});
      headers(200).header('content-length', String(opened.size + Buffer.byteLength(bridge)));
      return reply.send(body);
    },
  );

  // What the consultation button opens: the contact the stored report names, as a link of ours
  // (no redirect: the portal's address never forwards anyone elsewhere by itself).
  app.get(
    '/share/consultation',
    {
      schema: {
        hide: true,
        querystring: ShareQuery,
        response: {
          200: htmlResponse("the report's consultation contact"),
          400: htmlResponse('invalid share link'),
          404: htmlResponse('unknown share link, or no contact in the report'),
        },
      },
      onRequest: async (_request, reply) => {
        void reply.header('x-robots-tag', 'noindex');
      },
    },
    async (request, reply) => {
      const token = shareToken(request.query.token);
      if (token === null) return sendPage(reply, ctx, 400, page('Invalid share link', '<h1>Invalid share link</h1>'));
      const row = await findSharedSession(ctx, token);
      const opened = row === undefined ? null : await openSessionFile(ctx, row, 'report.html');
      // Read whole, at most the upload limit, and only when the button is used.
      const link = opened === null ? null : consultationLink((await buffer(opened.stream)).toString('utf8'));
      if (link === null)
        return sendPage(
          reply,
          ctx,
          404,
          page('No consultation contact', '<h1>No consultation contact</h1><p>This report names no contact.</p>'),
        );
      const shown = escapeHtml(link);
      return sendPage(
        reply,
        ctx,
        200,
        page(
          'Schedule a consultation',
          `<h1>Schedule a consultation</h1>
<p>The scanner report names this contact; it is the uploader's, not part of the portal:</p>
<p><a id="svc-consultation" href="${shown}" rel="noopener noreferrer">${shown}</a></p>`,
        ),
      );
    },
  );
}
