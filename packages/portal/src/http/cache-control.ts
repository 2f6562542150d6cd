import type { FastifyInstance } from 'fastify';

/**
 * `Cache-Control: no-store` on every /api and /identity answer (issue 11): keys, secrets
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
  app.addHook('onSend', async (request, reply) => {
    // The matched route, so `/%61pi/...` is /api too; the decoded raw path for a 404.
    const path = request.routeOptions.url ?? decodedPath(request.url);
    if (!/^\/(api|identity)(\/|$)/.test(path)) return;
    if (isPublic(request.method, request.routeOptions.url)) return;
    const current = reply.getHeader('cache-control');
    if (typeof current === 'string' && /\bno-store\b/.test(current)) return;
    reply.header('cache-control', 'no-store');
  });
}
