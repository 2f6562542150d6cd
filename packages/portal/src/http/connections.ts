import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { App, AppContext } from '../context.ts';

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

interface Address {
  open: number;
  /** Its connections with no request in progress, longest idle first. */
  idle: Ordered;
}

interface Tracked {
  address: Address;
  key: string;
  /** Requests in progress on it (0 or 1 in practice: Node handles one at a time). */
  busy: number;
}

/**
 * SVC_MAX_CONNECTIONS and SVC_MAX_CONNECTIONS_PER_ADDRESS (issue 21, point 2). One address
 * cannot take everyone's connections: past its own limit, a new connection from it replaces
 * its longest-idle one, or is closed if all of its connections are busy. At the global cap
 * a new connection replaces the longest-idle connection of anyone, and is closed only
 * when every connection has a request in progress. Idle: between requests on a keep-alive
 * connection, or not yet sent a request; such a connection costs its client nothing but a
 * reconnect. Node's own `maxConnections` is not used: it can only drop the newcomer.
 */
export function limitConnections(app: App, ctx: AppContext): void {
  const { maxConnections, maxConnectionsPerAddress } = ctx.config.http;
  const tracked = new Map<Socket, Tracked>();
  const addresses = new Map<string, Address>();
  const idle: Ordered = new Set();
  const warn = throttledWarning(ctx, 10_000);

  const setIdle = (socket: Socket, t: Tracked) => {
    idle.add(socket);
    t.address.idle.add(socket);
  };
  const setBusy = (socket: Socket, t: Tracked) => {
    idle.delete(socket);
    t.address.idle.delete(socket);
  };
  /** Forgets a connection at once, so its place is free before its close completes. */
  const release = (socket: Socket) => {
    const t = tracked.get(socket);
    if (t === undefined) return;
    tracked.delete(socket);
    setBusy(socket, t);
    if (--t.address.open === 0) addresses.delete(t.key);
  };
  const evict = (socket: Socket) => {
    release(socket);
    socket.destroy();
  };

  app.server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const address = addresses.get(key) ?? { open: 0, idle: new Set() };
    if (address.open >= maxConnectionsPerAddress) {
      const oldest = first(address.idle);
      if (oldest === undefined) {
        warn('connection refused: too many open connections from one address', { address: key });
        socket.destroy();
        return;
      }
      evict(oldest);
    }
    if (tracked.size >= maxConnections) {
      const oldest = first(idle);
      if (oldest === undefined) {
        warn('connection refused: too many open connections', { max_connections: maxConnections });
        socket.destroy();
        return;
      }
      evict(oldest);
    }
    addresses.set(key, address);
    address.open++;
    const t: Tracked = { address, key, busy: 0 };
    tracked.set(socket, t);
    setIdle(socket, t);
    socket.once('close', () => release(socket));
  });

  // Busy from the request's headers until both its answer and its body are done (a refused
  // upload's body is still read away after the answer).
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const t = tracked.get(socket);
    if (t === undefined) return;
    t.busy++;
    setBusy(socket, t);
    let pending = 2;
    const done = () => {
      if (--pending > 0) return;
      t.busy--;
      if (t.busy === 0 && tracked.get(socket) === t) setIdle(socket, t);
    };
    res.once('close', done);
    if (req.complete) done();
    else {
      const once = () => {
        req.off('end', once);
        req.off('close', once);
        done();
      };
      req.on('end', once);
      req.on('close', once);
    }
  });
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
    ctx.logger.warn({ ...fields, ...(seen?.skipped ? { refused_since_last_warning: seen.skipped } : {}) }, msg);
    last.set(msg, { at: now, skipped: 0 });
  };
}
