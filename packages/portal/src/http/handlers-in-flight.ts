import type { FastifyInstance, RouteHandlerMethod } from 'fastify';

/**
 * A handler keeps running when its client goes away (an aborted upload removes the files it
 * staged), and Node's server closes once the connections are gone, not the handlers. Every
 * route's handler is counted here, and the app's close waits for the running ones, so nothing
 * touches the store, the data directory or the pool after close() returned. Handlers are
 * bounded by the store's and the database's timeouts, so the wait is too.
 */
export function waitForHandlersOnClose(app: FastifyInstance): void {
  // A count and one callback per handler, not a set of promises: this runs on every request.
  let running = 0;
  let idle: (() => void) | null = null;
  const settled = () => {
    if (--running === 0 && idle !== null) idle();
  };
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = function counted(this: FastifyInstance, request, reply) {
      const result = handler.call(this, request, reply);
      if (!(result instanceof Promise)) return result;
      running++;
      result.then(settled, settled);
      return result;
    } as RouteHandlerMethod;
  });
  // onClose hooks run after the server stopped accepting and its connections ended.
  app.addHook('onClose', async () => {
    if (running === 0) return;
    await new Promise<void>((resolve) => {
      idle = resolve;
    });
    idle = null;
  });
}
