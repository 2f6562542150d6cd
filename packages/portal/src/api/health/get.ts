import { HealthResponse } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';

/** GET /api/health: public liveness; it never touches the database so it stays fast and cheap. */
export default function register(app: App, ctx: AppContext): void {
  app.get('/health', { schema: { tags: ['health'], summary: 'Portal health (public)', response: { 200: HealthResponse } } }, async () => ({
    status: 'ok' as const,
    version: ctx.version,
    timestamp: ctx.now().toISOString(),
    environment: ctx.config.environment,
  }));
}
