import { pipeline, type Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { ShareQuery } from '@svc/protocol';
import type { FastifyReply } from 'fastify';
import type { App, AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { setFileHeaders } from '../http/file-headers.ts';
import { openSessionFile } from '../sessions/open-file.ts';
import { fileNamesOf } from '../sessions/present.ts';
import type { SessionRow } from '../sessions/queries.ts';
import { findSharedSession, parseShareToken } from '../sessions/share.ts';
import { bridgeInserter, bridgeScript } from './bridge.ts';

/**
 * The share page, `{base_url}/share/?token=<64 hex>` (SPEC Share URL, D8).
 *
 * With a report.html the page IS the report, with the bridge script (bridge.ts)
 * inserted at its last closing body tag, streamed from storage (only the report's last
 * 64 KiB are held to find that tag, so memory per view does not grow with the report).
 * It is served like every uploaded HTML file:
 * sandbox CSP without allow-same-origin (an opaque origin, so neither the report nor the
 * bridge can use the portal's cookies or storage), nosniff, no caching, no Referer.
 * Search engines are told not to index any of it (`X-Robots-Tag: noindex`).
 * Without a report: a small summary page of ours, under the same headers. Missing or
 * malformed token: 400 page; unknown token: 404 page. `/share` redirects to `/share/`
 * so that the page's relative links (`../api/download?...`) resolve under any base path.
 */

const HTML = 'text/html; charset=utf-8';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content and quoted attribute values. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const htmlBody = Type.Unsafe<string | Buffer | Readable>(Type.String({ description: 'an HTML page' }));
const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: htmlBody } } });

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1a1a2e}table{border-collapse:collapse}td,th{padding:.25rem .75rem .25rem 0;text-align:left}</style></head>
<body>
${body}
</body>
</html>
`;
}

function sendPage(reply: FastifyReply, ctx: AppContext, status: number, html: string): FastifyReply {
  return setPageHeaders(reply, ctx, status).send(html);
}

function setPageHeaders(reply: FastifyReply, ctx: AppContext, status: number): FastifyReply {
  return setFileHeaders(reply.code(status), HTML, ctx.config.frameAncestors).header('x-robots-tag', 'noindex');
}

function viewLink(row: SessionRow, token: string, file: string): string {
  const q = new URLSearchParams({ session: row.session_id, file, mode: 'view', token });
  return `../api/download?${escapeHtml(q.toString())}`;
}

/** The page for a session without report.html: what /api/share answers, as HTML. */
export function summaryPage(row: SessionRow, token: string): string {
  const m = row.metadata;
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
<tr><th>Risk score</th>${cell(row.risk_score)}</tr>
<tr><th>Risk grade</th>${cell(row.risk_grade)}</tr>
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
      let token: string;
      try {
        token = parseShareToken(request.query.token, { required: true })!;
      } catch (err) {
        if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
        return sendPage(
          reply,
          ctx,
          400,
          page(
            'Invalid share link',
            '<h1>Invalid share link</h1><p>The link is incomplete or malformed. Ask the sender for the full link.</p>',
          ),
        );
      }
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

      if (row.files['report.html'] === undefined) return sendPage(reply, ctx, 200, summaryPage(row, token));
      const opened = await openSessionFile(ctx, row, 'report.html');
      if (opened === null) return notFoundPage();
      const bridge = bridgeScript({
        sessionId: row.session_id,
        token,
        client: opened.row.client,
        target: opened.row.target,
        uploadedAt: opened.row.uploaded_at.toISOString(),
        files: fileNamesOf(opened.row),
        baseUrl: ctx.config.baseUrl,
      });
      // The bridge goes in exactly once, so the length is known before the first byte.
      // pipeline: a storage read error destroys the response, a closed response the read.
      const body = pipeline(opened.stream, bridgeInserter(bridge), () => {});
      setPageHeaders(reply, ctx, 200).header('content-length', String(opened.size + Buffer.byteLength(bridge)));
      return reply.send(body);
    },
  );
}
