import { Type } from '@sinclair/typebox';
import { SessionClientId } from '../sessions.ts';

/**
 * The export formats of a session's findings (docs/exports.md): what the portal's
 * GET /api/sessions/{session_id}/export, the console's Export control and `svc export`
 * offer. No `node:` imports: the console bundles this file.
 */
export const EXPORT_FORMATS = ['csv', 'sarif', 'defectdojo'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const isExportFormat = (v: unknown): v is ExportFormat =>
  typeof v === 'string' && (EXPORT_FORMATS as readonly string[]).includes(v);

/** Content type and file-name suffix of each format. */
export const EXPORT_MEDIA: Record<ExportFormat, { contentType: string; suffix: string; label: string }> = {
  csv: { contentType: 'text/csv; charset=utf-8', suffix: 'findings.csv', label: 'CSV' },
  sarif: { contentType: 'application/sarif+json', suffix: 'findings.sarif', label: 'SARIF 2.1.0' },
  defectdojo: {
    contentType: 'application/json',
    suffix: 'defectdojo.json',
    label: 'DefectDojo (Generic Findings Import)',
  },
};

/** The attachment's file name: the session id (^[a-zA-Z0-9_-]+$, no escaping needed) and the format's suffix. */
export const exportFileName = (sessionId: string, format: ExportFormat): string =>
  `${sessionId}_${EXPORT_MEDIA[format].suffix}`;

export const ExportQuery = Type.Object(
  {
    format: Type.String({ maxLength: 32, description: `One of ${EXPORT_FORMATS.join(', ')}`, examples: ['sarif'] }),
    client_id: Type.Optional(SessionClientId),
  },
  { additionalProperties: false },
);
