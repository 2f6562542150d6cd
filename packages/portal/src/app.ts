import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { registerApiRoutes } from './api/index.ts';
import metricsGet from './api/metrics/get.ts';
import readyGet from './api/readyz/get.ts';
import type { App, AppContext } from './context.ts';
import { badRequest, errorHandler, notFoundHandler, tooManyRequests, unauthorized } from './http/errors.ts';
import { registerIdentityRoutes } from './identity/routes/index.ts';
import { AccessLog } from './http/access-log.ts';
import { registerNoStore } from './http/cache-control.ts';
import { registerCompression } from './http/compression.ts';
import { sendsAuthorization } from './http/credentials.ts';
import { findInputProblem, inputProblemMessage } from './http/input-rules.ts';
import { limitConnections } from './http/connections.ts';
import { lazyChildLogger } from './http/request-logger.ts';
import { waitForHandlersOnClose } from './http/handlers-in-flight.ts';
import { installRequestTimeout, serverOptions } from './http/timeouts.ts';
import { trustProxyOption } from './http/trust-proxy.ts';
import { serializerCompiler } from './http/serialization.ts';
import { validatorCompiler } from './http/validation.ts';
import { instrumentRequests } from './metrics/http.ts';
import { registerConsole } from './web/console.ts';
import { registerSharePage } from './web/share-page.ts';

/**
 * The HTTP application: /api (portal functions), /identity (the portal's own identity
 * provider), OpenAPI at /api/openapi.json and its browsable page at /api/docs, the web
 * console at /console/ (and its session view at /collect/).
 */
export async function buildApp(ctx: AppContext): Promise<App> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    logController: new AccessLog(ctx.config.accessLog),
    childLoggerFactory: lazyChildLogger,
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    ...serverOptions(ctx),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before any route: every handler is counted as it is added.
  waitForHandlersOnClose(app);
  limitConnections(app, ctx);
  installRequestTimeout(app, ctx);
  if (ctx.metrics !== null) instrumentRequests(app, ctx.metrics);

  // Unknown fields are refused, not silently dropped; only query strings are coerced.
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // One rule for every route, before schema validation: no NUL or lone surrogate in any
  // string (PostgreSQL cannot store them), no JSON deeper than the limit (the 400, never a 500).
  const maxDepth = ctx.config.http.maxJsonDepth;
  const clean = (value: unknown) => isEmpty(value) || findInputProblem(value, maxDepth) === null;
  // A callback hook, not an async one: no promise per request. Most requests (a key check, a
  // heartbeat) pass the full check at once; only a request with a problem reads its route's options.
  app.addHook('preValidation', (request, _reply, done) => {
    if (clean(request.params) && clean(request.query) && clean(request.body)) {
      done();
      return;
    }
    const parts = [
      ['path', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const;
    // A route that reads its own validation errors (the OAuth token endpoint answers in
    // RFC 6749's format, and refuses unstorable strings as invalid_grant itself) gets the
    // depth rule only, as its validation error.
    const own = request.routeOptions.attachValidation === true;
    // A route that cleans such strings itself on purpose (agent command output) says so.
    const keep = request.routeOptions.config.keepUnstorableStrings === true;
    for (const [part, value] of parts) {
      const problem = findInputProblem(value, maxDepth, { strings: !own && !keep });
      if (problem === null) continue;
      const error = badRequest(inputProblemMessage(part, problem));
      if (!own) {
        done(error);
        return;
      }
      request.validationError = Object.assign(error, {
        validation: [],
        validationContext: part === 'path' ? 'params' : part,
      });
      break;
    }
    done();
  });

  app.decorateRequest('principal', null);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  registerNoStore(app);
  // Before any route: the plugin attaches itself to each route as it is added.
  await registerCompression(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Scan collection portal API',
        version: ctx.version,
        // No open-source license is granted (package.json and the README state none).
        license: { name: 'Proprietary' },
        description:
          'Errors are `{"error": "<message>"}` (docs/api.md#error-body-and-status-codes). License keys go in `x-api-key`; admin identity JWTs in `X-Identity-Token`. ' +
          'Any `Authorization` header on /api/* is refused with the same plain 401 as an invalid token.',
      },
      servers: [{ url: ctx.config.baseUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'License key svc_{pro|biz|msp}_<64 hex> or the legacy shared key',
          },
          identityToken: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Identity-Token',
            description: 'Identity JWT (never in Authorization)',
          },
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'Identity provider calls (/identity/*), and GET /metrics with SVC_METRICS_TOKEN',
          },
        },
      },
    },
  });
  // The docs page gets the security headers of our own pages: swagger-ui's CSP (scripts
  // from /api/docs only, no inline ones), never framed (it is a page that sends
  // requests with what the reader types in), no Referer, no sniffing. Styles: swagger-ui
  // sets inline styles from script, so 'unsafe-inline' (hashes would disable it); the page
  // shows no uploaded content. No upgrade-insecure-requests: a portal on plain http
  // (localhost) would lose its own assets.
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    staticCSP: true,
    transformStaticCSP: (csp) =>
      `${csp
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/style-src [^;]*/, "style-src 'self' 'unsafe-inline'")
        .replace(/\s*upgrade-insecure-requests;?/, '')
        .replace(/\s+;/g, ';')
        .trim()
        .replace(/;?$/, ';')} form-action 'self'`,
    uiHooks: {
      onRequest: async (_request, reply) => {
        void reply.headers({
          'x-content-type-options': 'nosniff',
          'x-frame-options': 'DENY',
          'referrer-policy': 'no-referrer',
        });
      },
    },
  });
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, limit) => tooManyRequests('Too many requests, slow down', limit.ttl / 1000),
  });

  // docs/api.md#credentials: the JWT belongs in X-Identity-Token. A token in Authorization is
  // terminated here, before any handler, with the same plain 401 an invalid token gets.
  // The routed path is checked, not the raw URL, so `/%61pi/...` cannot slip past.
  app.addHook('onRequest', (request, _reply, done) => {
    // The header first: the route is looked up only for a request that carries one.
    if (!sendsAuthorization(request.headers)) {
      done();
      return;
    }
    const path = request.routeOptions.url ?? request.url;
    done(path.startsWith('/api/') ? unauthorized() : undefined);
  });

  await app.register(
    async (api) => {
      registerApiRoutes(api, ctx);
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: '/api' },
  );
  if (ctx.signingKey !== null) {
    await app.register(async (idp) => registerIdentityRoutes(idp, ctx), { prefix: '/identity' });
  }
  await app.register(async (root) => readyGet(root, ctx));
  await app.register(async (root) => metricsGet(root, ctx));
  await app.register(async (web) => registerSharePage(web, ctx));
  await app.register(async (web) => registerConsole(web, ctx));
  return app;
}

/** Nothing to check: no value, or an object without own keys (a route without parameters, an empty query). */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== 'object') return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}
