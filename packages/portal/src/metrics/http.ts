import type { App } from '../context.ts';
import type { PortalMetrics } from './registry.ts';

/**
 * Every answered request, counted once here rather than per route: the route pattern
 * (`/api/sessions/:id`, never the raw URL), the method and the status, and its time.
 */
export function instrumentRequests(app: App, metrics: PortalMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** A scrape: the registry's text, collected now, with the text format's content type. */
export async function sendMetrics(
  metrics: PortalMetrics,
  reply: { type(contentType: string): unknown },
): Promise<string> {
  const text = await metrics.registry.metrics();
  reply.type(metrics.registry.contentType);
  return text;
}
