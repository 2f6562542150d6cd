import type { FastifyInstance } from 'fastify';

/**
 * `Cache-Control: no-store` on every /api and /identity answer: keys, secrets
 * (a license's plaintext key, a webhook's signing secret, tokens) and tenant data must
 * not stay in a browser's or a proxy's cache. One hook instead of one line per route, so
 * a new route is covered without anyone remembering to. The exceptions are answers that
 * are the same for everyone and carry nothing private; they keep whatever the route set.
 * A route's own stricter value (`private, no-store`) is kept.
 */
const PUBLIC_ROUTES = new Set([
  'GET /api/health',
  'GET /api/openapi.json',
  'GET /identity/.well-known/openid-configuration',
  'GET /identity/.well-known/jwks.json',
]);
/** The API docs page and its static files (public, the same for everyone). */
const PUBLIC_PREFIXES = ['/api/docs'];

function isPublic(method: string, routeUrl: string | undefined): boolean {
  if (routeUrl === undefined) return false;
  const m = method === 'HEAD' ? 'GET' : method;
  if (m !== 'GET') return false;
  return (
    PUBLIC_ROUTES.has(`${m} ${routeUrl}`) || PUBLIC_PREFIXES.some((p) => routeUrl === p || routeUrl.startsWith(`${p}/`))
  );
}

function decodedPath(url: string): string {
  const path = url.split('?', 1)[0]!;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export function registerNoStore(app: FastifyInstance): void {
  // A callback hook (no promise per answer). An answer that already says no-store (a key
  // check, a heartbeat: the route sets it) is left as it is before the route is looked at.
  app.addHook('onSend', (request, reply, payload, done) => {
    const current = reply.getHeader('cache-control');
    if (typeof current === 'string' && (current === 'no-store' || /\bno-store\b/.test(current))) {
      done(null, payload);
      return;
    }
    // The matched route, so `/%61pi/...` is /api too; the decoded raw path for a 404.
    const routeUrl = request.routeOptions.url;
    const path = routeUrl ?? decodedPath(request.url);
    if (/^\/(api|identity)(\/|$)/.test(path) && !isPublic(request.method, routeUrl))
      reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
