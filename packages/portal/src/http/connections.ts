import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { App, AppContext } from '../context.ts';
import { hasNoBody } from './request-body.ts';

/**
 * The address a connection counts against: the socket's peer (behind a proxy, the proxy),
 * IPv4 as is (an IPv4-mapped IPv6 address too), IPv6 by its /64, which one host usually
 * has whole.
 */
export function addressKey(remote: string | undefined): string {
  if (remote === undefined || !ipaddr.isValid(remote)) return 'unknown';
  const addr = ipaddr.process(remote);
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${(addr as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

/** A set of sockets, oldest entry first (a Set keeps insertion order). */
type Ordered = Set<Socket>;

/** Connections that may be displaced, in this order, each oldest first. */
interface Displaceable {
  /** Between requests on keep-alive. */
  idle: Ordered;
  /** A request whose body arrives below the minimum rate. */
  slow: Ordered;
  /** Not yet sent a whole first request. */
  fresh: Ordered;
}

interface Address extends Displaceable {
  open: number;
}

interface Tracked {
  address: Address;
  key: string;
  /** Requests in progress on it (0 or 1 in practice: Node handles one at a time). */
  busy: number;
  /** The request whose body is being measured, until it is done. */
  request: IncomingMessage | null;
  /** Bytes read on the socket at the start of the current rate window, and when it started. */
  mark: number;
  markAt: number;
}

/**
 * SVC_MAX_CONNECTIONS and SVC_MAX_CONNECTIONS_PER_ADDRESS.
 * One address cannot take everyone's connections: past its own limit, a new connection from
 * it replaces one of its own that is idle, else slow, else fresh, or is closed if all of them
 * are busy. At the global cap the same, among everyone's.
 * - Idle: between requests on keep-alive (headers of the next one trickled in included);
 *   closing it costs its client nothing but a reconnect.
 * - Slow: a request whose body brought less than SVC_SLOW_REQUEST_BYTES_PER_SECOND over its
 *   last window of SVC_SLOW_REQUEST_WINDOW_SECONDS (the first window is its grace period), on
 *   any route. It holds a place without using it (the review's lockout: a byte of a login
 *   body every 5 s on 1,000 connections).
 * - Fresh: not yet sent a whole first request (its headers trickled in included). Last, so
 *   that newcomers arriving together at a full cap take slow places, not each other's.
 * Busy otherwise: a request that is arriving fast enough, or being answered.
 * Node's own `maxConnections` is not used: it can only drop the newcomer.
 */
export function limitConnections(app: App, ctx: AppContext): void {
  const { maxConnections, maxConnectionsPerAddress, slowRequestBytesPerSecond, slowRequestWindowSeconds } =
    ctx.config.http;
  const tracked = new Map<Socket, Tracked>();
  const addresses = new Map<string, Address>();
  const everyone: Displaceable = { idle: new Set(), slow: new Set(), fresh: new Set() };
  const warn = throttledWarning(ctx, 10_000);

  const setIdle = (socket: Socket, t: Tracked) => {
    everyone.idle.add(socket);
    t.address.idle.add(socket);
  };
  const setBusy = (socket: Socket, t: Tracked) => {
    everyone.idle.delete(socket);
    t.address.idle.delete(socket);
    everyone.fresh.delete(socket);
    t.address.fresh.delete(socket);
  };
  const setSlow = (socket: Socket, t: Tracked, slow: boolean) => {
    if (slow === everyone.slow.has(socket)) return;
    if (!slow) {
      everyone.slow.delete(socket);
      t.address.slow.delete(socket);
      return;
    }
    everyone.slow.add(socket);
    t.address.slow.add(socket);
    ctx.logger.debug({ address: t.key }, 'connection slow: its request arrives below the minimum rate');
  };
  /** Forgets a connection at once, so its place is free before its close completes. */
  const release = (socket: Socket) => {
    const t = tracked.get(socket);
    if (t === undefined) return;
    tracked.delete(socket);
    setBusy(socket, t);
    setSlow(socket, t, false);
    if (--t.address.open === 0) addresses.delete(t.key);
  };
  /** Closes the first connection of `among` that may go; false when there is none. */
  const displace = (among: Displaceable): boolean => {
    const victim = first(among.idle) ?? first(among.slow) ?? first(among.fresh);
    if (victim === undefined) return false;
    if (everyone.slow.has(victim))
      warn('connection displaced: its request arrived too slowly', {
        address: tracked.get(victim)?.key,
        min_bytes_per_second: slowRequestBytesPerSecond,
      });
    release(victim);
    victim.destroy();
    return true;
  };

  app.server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const address = addresses.get(key) ?? { open: 0, idle: new Set(), slow: new Set(), fresh: new Set() };
    if (address.open >= maxConnectionsPerAddress && !displace(address)) {
      warn('connection refused: too many open connections from one address', { address: key });
      socket.destroy();
      return;
    }
    if (tracked.size >= maxConnections && !displace(everyone)) {
      warn('connection refused: too many open connections', { max_connections: maxConnections });
      socket.destroy();
      return;
    }
    addresses.set(key, address);
    address.open++;
    const t: Tracked = { address, key, busy: 0, request: null, mark: 0, markAt: 0 };
    tracked.set(socket, t);
    everyone.fresh.add(socket);
    address.fresh.add(socket);
    socket.once('close', () => release(socket));
  });

  const requestDone = (socket: Socket, t: Tracked, req: IncomingMessage) => {
    t.busy--;
    if (t.request === req) t.request = null;
    setSlow(socket, t, false);
    if (t.busy === 0 && tracked.get(socket) === t) setIdle(socket, t);
  };
  /** The answer to a request without a body has gone: the request is done. */
  function answered(this: ServerResponse): void {
    const req = this.req;
    const t = tracked.get(req.socket);
    if (t !== undefined) requestDone(req.socket, t, req);
  }

  // Busy from the request's headers until both its answer and its body are done (a refused
  // upload's body is still read away after the answer).
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const t = tracked.get(socket);
    if (t === undefined) return;
    t.busy++;
    setBusy(socket, t);
    // The body's rate is measured from here: the headers' bytes do not count.
    t.request = req;
    t.mark = socket.bytesRead;
    t.markAt = Date.now();
    // Without a body (a GET, a key check) only the answer is awaited, by one shared listener.
    if (req.complete || hasNoBody(req)) {
      res.on('close', answered);
      return;
    }
    let pending = 2;
    const done = () => {
      if (--pending > 0) return;
      requestDone(socket, t, req);
    };
    res.once('close', done);
    const once = () => {
      req.off('end', once);
      req.off('close', once);
      done();
    };
    req.on('end', once);
    req.on('close', once);
  });

  if (slowRequestBytesPerSecond > 0) {
    const windowMs = slowRequestWindowSeconds * 1000;
    const measure = (socket: Socket, t: Tracked, req: IncomingMessage, now: number) => {
      // The body is all in, or the portal is not reading it yet (a full buffer pauses the
      // socket): the wait is not the client's. The window starts again from here.
      if (req.complete || socket.isPaused() || req.readableLength >= req.readableHighWaterMark) {
        setSlow(socket, t, false);
        t.mark = socket.bytesRead;
        t.markAt = now;
        return;
      }
      if (now - t.markAt < windowMs) return;
      // Against the time really elapsed: a late tick does not raise the bar.
      setSlow(socket, t, socket.bytesRead - t.mark < (slowRequestBytesPerSecond * (now - t.markAt)) / 1000);
      t.mark = socket.bytesRead;
      t.markAt = now;
    };
    const timer = setInterval(
      () => {
        const now = Date.now();
        for (const [socket, t] of tracked) if (t.request !== null) measure(socket, t, t.request, now);
      },
      Math.min(windowMs, 1000),
    ).unref();
    app.server.once('close', () => clearInterval(timer));
  }
}

function first(set: Ordered): Socket | undefined {
  for (const s of set) return s;
  return undefined;
}

/** A warning per message at most every `ms`, with how many were left out since the last one. */
function throttledWarning(ctx: AppContext, ms: number) {
  const last = new Map<string, { at: number; skipped: number }>();
  return (msg: string, fields: Record<string, unknown>) => {
    const now = Date.now();
    const seen = last.get(msg);
    if (seen !== undefined && now - seen.at < ms) {
      seen.skipped++;
      return;
    }
    ctx.logger.warn({ ...fields, ...(seen?.skipped ? { more_since_last_warning: seen.skipped } : {}) }, msg);
    last.set(msg, { at: now, skipped: 0 });
  };
}
