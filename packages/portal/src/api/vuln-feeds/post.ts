import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { FEEDS } from '../../vuln-feeds/input.ts';
import { importUploadedFeed, readFeedBody } from '../../vuln-feeds/upload.ts';

const Nullable = <T extends ReturnType<typeof Type.Object>>(t: T) => Type.Union([t, Type.Null()]);

const ImportResponse = Type.Object({
  nvd: Nullable(
    Type.Object({ files: Type.Integer(), read: Type.Integer(), changed: Type.Integer(), total: Type.Integer() }),
  ),
  kev: Nullable(Type.Object({ records: Type.Integer(), catalog_version: Type.Union([Type.String(), Type.Null()]) })),
  epss: Nullable(Type.Object({ records: Type.Integer(), score_date: Type.Union([Type.String(), Type.Null()]) })),
  debian: Nullable(
    Type.Object({
      packages: Type.Integer({ description: 'Source packages the tracker lists' }),
      cves: Type.Integer({ description: 'Distinct CVEs with a statement for some release' }),
      statements: Type.Integer({ description: 'Statements held: one per package, CVE and release' }),
    }),
  ),
  index: Type.Object({
    version: Type.String({ description: 'The index version now served (its ETag)' }),
    changed: Type.Boolean({ description: 'False when the content equals the index already served' }),
    cves: Type.Integer(),
    products: Type.Integer(),
    ranges: Type.Integer(),
    debian_packages: Type.Integer({ description: "Source packages the Debian tracker's statements are carried for" }),
    bytes: Type.Integer({ description: 'Size of the stored gzip body' }),
  }),
});

const CONTENT_TYPES = ['application/json', 'application/gzip', 'text/csv', 'application/octet-stream'];

/**
 * POST /api/vuln-feeds/{nvd|kev|epss|debian} (admin only): one feed file as the body, plain or gzip
 * (docs/vuln-feeds.md), imported as `npm run feeds:import` would and audited; the answer is
 * what was imported and the index now served. A refused file is a 400 naming what is wrong and
 * changes nothing; a file over the route's limit a 413.
 */
export default function register(app: App, ctx: AppContext): void {
  // A child context handing the request stream to the handler unread, whatever its type.
  void app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.post(
      '/vuln-feeds/:feed',
      {
        onRequest: requireUser(ctx, { adminOnly: true }),
        schema: {
          operationId: 'importVulnFeed',
          tags: ['vulnerability feeds'],
          summary:
            "Import one vulnerability feed file (NVD CVE JSON 2.0, CISA KEV JSON, FIRST EPSS CSV, the Debian security tracker's JSON; gzip allowed)",
          security: [{ identityToken: [] }],
          params: Type.Object({ feed: Type.Union(FEEDS.map((f) => Type.Literal(f))) }),
          consumes: CONTENT_TYPES,
          response: responses({ 200: ImportResponse }, 400, 401, 403, 413, 500, 503),
        },
      },
      async (request) => {
        const { feed } = request.params;
        const body: AsyncIterable<Buffer> | Buffer[] = (request.body as Readable | undefined) ?? [];
        const bytes = await readFeedBody(feed, body, Number(request.headers['content-length']));
        return importUploadedFeed(ctx, userOf(request), feed, bytes);
      },
    );
  });
}
