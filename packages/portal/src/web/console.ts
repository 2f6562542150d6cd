import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { setFileHeaders } from '../http/file-headers.ts';
import { openSessionFile } from '../sessions/open-file.ts';
import { findSharedSession, parseShareToken } from '../sessions/share.ts';

/**
 * The web console (packages/web, built to its dist/): `/` leads to `/console/`, where the
 * console signs in and shows its sections; `/collect/?session=<id>` is the same application
 * on its session view (command results link there).
 *
 * Every console address answers the built index.html (the console routes in the browser),
 * with no-cache so a new build is seen at once; its hashed assets under /console/assets/ are
 * immutable. The CSP allows only the portal itself: no inline script or style, no other
 * origin, never framed; uploaded reports it shows are framed from /api/download and /share/,
 * which carry their own sandbox CSP (an opaque origin that cannot read the console's token).
 * The session view frames a session's report and executive summary from
 * `/collect/frame?token=<share token>&file=<name>`: the stored file as /api/download serves
 * it (sandbox CSP for scripts only, an opaque origin, nothing loaded from elsewhere) except
 * that the console, and only it, may frame it. The console's `frame-src 'self'` also keeps a
 * framed report from navigating its frame to another site.
 * The build is read from disk per request, so building after the portal started works; with
 * no build the console answers a 503 page that says how to build it.
 */

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The built asset types; anything else under /console/assets/ is not ours. */
const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Vite's flat, hashed asset names: one path segment, no dot-files, no `..`. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

const NOT_BUILT_PAGE = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Console not built</title></head>
<body>
<h1>The web console is not built</h1>
<p>The portal is running, but the console's files are missing. Build them with <code>npm run build:web</code> in the project directory, then reload this page.</p>
</body>
</html>
`;

/** The files the session view frames. */
const FRAMED_FILES = ['report.html', 'exec_summary.html'] as const;

function messagePage(title: string, text: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title}</title></head>
<body><p>${text}</p></body>
</html>
`;
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': CONSOLE_CSP,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-robots-tag': 'noindex',
  });
}

async function readIndex(webDir: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(path.join(webDir, 'index.html'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Keeps the query string across a redirect to the slash-terminated address. */
function withQuery(request: FastifyRequest, target: string): string {
  const at = request.url.indexOf('?');
  return at === -1 ? target : `${target}${request.url.slice(at)}`;
}

export function registerConsole(app: App, ctx: AppContext): void {
  const webDir = ctx.config.webDir;

  async function sendIndex(_request: FastifyRequest, reply: FastifyReply) {
    const html = await readIndex(webDir);
    if (html === null) return pageHeaders(reply.code(503)).header('cache-control', 'no-store').send(NOT_BUILT_PAGE);
    return pageHeaders(reply).header('cache-control', 'no-cache').send(html);
  }

  const hidden = { schema: { hide: true } };
  app.get('/', hidden, async (_request, reply) => reply.redirect('/console/', 302));
  app.get('/console', hidden, async (request, reply) => reply.redirect(withQuery(request, '/console/'), 301));
  app.get('/collect', hidden, async (request, reply) => reply.redirect(withQuery(request, '/collect/'), 301));
  app.get('/console/', hidden, sendIndex);
  app.get('/console/*', hidden, sendIndex);
  app.get('/collect/', hidden, sendIndex);

  app.get<{ Querystring: { token?: string; file?: string } }>(
    '/collect/frame',
    {
      schema: {
        hide: true,
        querystring: {
          type: 'object',
          properties: { token: { type: 'string', maxLength: 128 }, file: { type: 'string', maxLength: 64 } },
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      // Framed by the console only: the sandbox CSP of uploaded HTML, with frame-ancestors 'self'.
      const send = (status: number, html: string) =>
        setFileHeaders(reply.code(status), 'text/html; charset=utf-8', ["'self'"])
          .header('x-robots-tag', 'noindex')
          .send(html);
      const file = FRAMED_FILES.find((f) => f === request.query.file);
      let token: string;
      try {
        token = parseShareToken(request.query.token, { required: true })!;
      } catch (err) {
        if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
        return send(400, messagePage('Invalid link', 'This frame needs the session&#39;s share token.'));
      }
      if (file === undefined) return send(400, messagePage('Invalid link', 'Unknown file.'));
      const row = await findSharedSession(ctx, token);
      const opened = row === undefined ? null : await openSessionFile(ctx, row, file);
      if (opened === null) return send(404, messagePage('Not found', 'This file is not available.'));
      setFileHeaders(reply, 'text/html; charset=utf-8', ["'self'"])
        .header('x-robots-tag', 'noindex')
        .header('content-length', String(opened.size));
      return reply.send(opened.stream);
    },
  );

  app.get<{ Params: { file: string } }>('/console/assets/:file', hidden, async (request, reply) => {
    const name = request.params.file;
    const type = ASSET_TYPES[path.extname(name)];
    if (!ASSET_NAME.test(name) || name.includes('..') || type === undefined) return reply.callNotFound();
    const file = path.join(webDir, 'assets', name);
    let size: number;
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) return reply.callNotFound();
      size = stat.size;
    } catch {
      return reply.callNotFound();
    }
    return reply
      .headers({
        'content-type': type,
        'content-length': String(size),
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(createReadStream(file));
  });
}
