import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import { ErrorBody, VULN_INDEX_PATH } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import type { App, AppContext } from '../../context.ts';
import { DomainError } from '../../domain/errors.ts';
import { acceptsGzip, currentIndex, matchesVersion } from '../../vuln-feeds/serve.ts';

const INDEX_DESCRIPTION =
  'The VulnIndex (packages/protocol/src/vuln-index.ts): format, version, generated_at, sources, cves, products';

/**
 * GET /api/vuln-index — the vulnerability index built from the imported feeds, for `svc` and
 * `svcd` (docs/vuln-feeds.md). Any valid key (or a signed-in user) may read it: it carries
 * public data only. `ETag: "<version>"`; an If-None-Match naming it gets 304 without a body.
 * The body is stored gzip-compressed and sent as it is to a caller that accepts gzip.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    VULN_INDEX_PATH.replace(/^\/api/, ''),
    {
      schema: {
        operationId: 'getVulnIndex',
        tags: ['vulnerability feeds'],
        summary: 'The vulnerability index (CPE ranges to CVE, CVSS, KEV, EPSS), conditional on its version',
        security: [{ apiKey: [] }, { identityToken: [] }],
        headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()) }),
        response: {
          200: {
            description: 'The index (ETag: its version in quotes)',
            content: {
              'application/json': {
                schema: Type.Unsafe<Buffer | Readable>(
                  Type.Object({}, { additionalProperties: true, description: INDEX_DESCRIPTION }),
                ),
              },
            },
          },
          304: { description: 'If-None-Match names the current version: the cached copy is current' },
          ...Object.fromEntries([401, 403, 404, 500, 503].map((code) => [code, ErrorBody])),
        },
      },
    },
    async (request, reply) => {
      const caller = await resolveCredential(ctx, request);
      if (caller === null) throw new DomainError('unauthorized.credential', 'Unauthorized');
      const index = await currentIndex(ctx.pool, ctx.vulnIndex);
      reply.header('etag', `"${index.version}"`);
      reply.header('vary', 'accept-encoding');
      if (matchesVersion(request.headers['if-none-match'], index.version)) return reply.code(304).send();
      reply.type('application/json; charset=utf-8');
      if (acceptsGzip(request.headers['accept-encoding'])) {
        reply.header('content-encoding', 'gzip');
        reply.header('content-length', String(index.gzip.length));
        return reply.send(index.gzip);
      }
      return reply.send(Readable.from([index.gzip]).pipe(createGunzip()));
    },
  );
}
