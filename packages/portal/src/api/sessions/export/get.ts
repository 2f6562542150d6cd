import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import {
  EXPORT_FORMATS,
  EXPORT_MEDIA,
  ExportQuery,
  exportFileName,
  isExportFormat,
  sessionHref,
  NO_CLIENT,
} from '@svc/protocol';
import { exportChunks } from '@svc/protocol/node';
import type { App, AppContext } from '../../../context.ts';
import { badRequest } from '../../../http/errors.ts';
import { setFileHeaders } from '../../../http/file-headers.ts';
import { parseSessionId } from '../../../sessions/access.ts';
import { readServedDocument } from '../../../sessions/served-file.ts';
import { fileContent } from '../../../http/responses.ts';
import { pathSession, SessionPath, sessionReadResponses } from '../session-path.ts';

/**
 * GET /api/sessions/{session_id}/export?format=csv|sarif|defectdojo[&client_id=] — the
 * session's findings as CSV, SARIF 2.1.0 or DefectDojo Generic Findings Import JSON
 * (docs/exports.md), built from the stored session file and streamed as an attachment.
 * Scoped like the findings list and the download: another client's session is a 404.
 *
 * Checklist: validate the id and the format (400, before any lookup) → credential → the
 * session within scope → read the stored file (bounded) with its current triage → stream the export with the file
 * headers of a download.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/:session_id/export',
    {
      schema: {
        operationId: 'exportSessionFindings',
        tags: ['sessions'],
        summary: "The session's findings as CSV, SARIF 2.1.0 or DefectDojo generic findings",
        security: [{ identityToken: [] }, { apiKey: [] }],
        params: SessionPath,
        querystring: ExportQuery,
        response: {
          ...sessionReadResponses(Type.Null()),
          200: {
            description: 'The export, streamed as an attachment',
            content: {
              'text/csv': fileContent('CSV, RFC 4180, UTF-8 (docs/exports.md#csv)'),
              'application/sarif+json': fileContent('SARIF 2.1.0 log (docs/exports.md#sarif)', true),
              'application/json': fileContent('DefectDojo Generic Findings Import (docs/exports.md#defectdojo)', true),
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { format, client_id } = request.query;
      parseSessionId(request.params.session_id, 'session_id');
      if (!isExportFormat(format))
        throw badRequest(`Invalid format parameter: must be one of ${EXPORT_FORMATS.join(', ')}`);
      const session = await pathSession(ctx, request, { session_id: request.params.session_id, client_id });
      const doc = await readServedDocument(ctx, session);
      const clientId = session.client_id === NO_CLIENT ? null : session.client_id;
      const chunks = exportChunks(format, doc, {
        sessionUrl: `${ctx.config.baseUrl}${sessionHref(session.session_id, clientId)}`,
        toolVersion: ctx.version,
        today: ctx.now().toISOString().slice(0, 10),
      });
      setFileHeaders(reply, EXPORT_MEDIA[format].contentType, ctx.config.frameAncestors);
      reply.header('content-disposition', `attachment; filename="${exportFileName(session.session_id, format)}"`);
      return reply.send(Readable.from(chunks, { objectMode: false }));
    },
  );
}
