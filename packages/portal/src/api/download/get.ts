import { AmbiguousSessionBody, DownloadQuery, ErrorBody, SESSION_FILES, type SessionFileName } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { setFileHeaders } from '../../http/file-headers.ts';
import { fileContent } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { sessionFileToServe } from '../../sessions/served-file.ts';
import { parseShareToken } from '../../sessions/share.ts';

const MODES = ['view', 'download'] as const;
const FLAGS = ['true', 'false'] as const;

/**
 * GET /api/download?session=<id>&file=<name>[&mode=view][&token=<share token>][&client_id=][&as_uploaded=true]
 * (docs/api.md#sessions).
 * `client_id` names the session's client when the id exists under several (docs/api.md#ids-are-per-client).
 *
 * Checklist: validate `session`, `file` and `mode` (400, before any lookup) → credential:
 * an in-scope JWT, a key of the session's client (legacy key: any session), or the share
 * token of this very session → the file must exist in the session (404) → stream it with
 * our content type, its length, nosniff, no caching, and a CSP sandbox (an opaque origin
 * for HTML). session_results.json states the current triage of its findings (sessions/served-file.ts),
 * or with `as_uploaded=true` is the stored evidence byte for byte.
 * `mode=view` serves inline; otherwise an attachment named
 * `<session>_<file>` (session ids match ^[a-zA-Z0-9_-]+$, so the name needs no escaping).
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/download',
    {
      schema: {
        operationId: 'downloadSessionFile',
        tags: ['sessions'],
        summary: 'Download or view a stored session file',
        security: [{ identityToken: [] }, { apiKey: [] }, {}],
        querystring: DownloadQuery,
        response: {
          200: {
            description: 'The stored file, streamed',
            content: {
              'application/json': fileContent('session_results.json (with its current triage, or as uploaded)', true),
              'text/plain': fileContent('pipeline.log'),
              'text/html': fileContent('report.html, exec_summary.html (served with a sandbox CSP)'),
            },
          },
          ...Object.fromEntries([400, 401, 403, 404, 500, 503].map((code) => [code, ErrorBody])),
          409: AmbiguousSessionBody,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const sessionId = parseSessionId(q.session);
      const file = (q.file === undefined || q.file === '' ? 'session_results.json' : q.file) as SessionFileName;
      if (!SESSION_FILES.includes(file))
        throw badRequest(`Invalid file parameter: must be one of ${SESSION_FILES.join(', ')}`);
      if (q.mode !== undefined && !(MODES as readonly string[]).includes(q.mode))
        throw badRequest('Invalid mode parameter: must be view or download');
      if (q.as_uploaded !== undefined && !(FLAGS as readonly string[]).includes(q.as_uploaded))
        throw badRequest('Invalid as_uploaded parameter: must be true or false');
      const shareToken = parseShareToken(q.token, { required: false }) ?? undefined;

      const principal = await resolveCredential(ctx, request, 'download');
      const session = await accessSession(ctx, principal, sessionId, { shareToken, clientId: q.client_id });
      const opened = await sessionFileToServe(ctx, session, file, q.as_uploaded === 'true');

      setFileHeaders(reply, opened.contentType, ctx.config.frameAncestors);
      reply.header('content-length', String(opened.size));
      reply.header('content-disposition', q.mode === 'view' ? 'inline' : `attachment; filename="${sessionId}_${file}"`);
      return reply.send(opened.body);
    },
  );
}
