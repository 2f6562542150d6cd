import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/** The embedded server's port when SVC_EMBEDDED_PG_PORT is unset and it is free. */
const DEFAULT_EMBEDDED_PG_PORT = 54329;

/** Attempts on ports taken between the check and PostgreSQL's own bind (two portals starting at once). */
const ATTEMPTS = 5;

/** Whether a listener can bind 127.0.0.1:`port` now (0: any free port, the one the system gave). */
function bindable(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

/** The port the cluster ran on last, from the command line PostgreSQL records in postmaster.opts. */
async function previousPort(cluster: string): Promise<number | null> {
  const opts = await fs.readFile(path.join(cluster, 'postmaster.opts'), 'utf8').catch(() => '');
  const port = Number(/"-p" "(\d+)"/.exec(opts)?.[1]);
  return Number.isInteger(port) && port > 0 && port <= 65535 ? port : null;
}

/** Thrown by a start attempt; `portTaken` when PostgreSQL could not bind its port. */
export class StartFailure extends Error {
  readonly portTaken: boolean;
  constructor(detail: string) {
    super(detail);
    this.portTaken = /Address already in use/.test(detail);
  }
}

/**
 * Starts the embedded server with `start(port)` on the port it should use.
 *
 * SVC_EMBEDDED_PG_PORT set (`fixed`): that port, and a port another process holds is an error
 * naming the setting. Unset: the port this cluster used before when it is free (tools and
 * people that connect with psql keep their address; the portal itself connects to whatever
 * port this start chose), else 54329 when free, else one the system picks. Two portals with
 * their own data dirs on one host so start side by side; a port taken between the check and
 * PostgreSQL's bind is retried on another.
 */
export async function startOnFreePort<T>(
  fixed: number | null,
  cluster: string,
  start: (port: number) => Promise<T>,
): Promise<{ port: number; started: T }> {
  if (fixed !== null) {
    if ((await bindable(fixed)) === null)
      throw new Error(
        `SVC_EMBEDDED_PG_PORT=${fixed}: 127.0.0.1:${fixed} is already in use by another process; set SVC_EMBEDDED_PG_PORT to a free port, or unset it to let the portal choose one`,
      );
    return { port: fixed, started: await attempt(fixed, start, '(set SVC_EMBEDDED_PG_PORT to use another port)') };
  }
  const tried = new Set<number>();
  const preferred = [await previousPort(cluster), DEFAULT_EMBEDDED_PG_PORT].filter((p): p is number => p !== null);
  for (let i = 1; ; i++) {
    let port: number | null = null;
    for (const candidate of preferred) {
      if (port === null && !tried.has(candidate) && (await bindable(candidate)) !== null) port = candidate;
    }
    port ??= await bindable(0);
    if (port === null) throw new Error('Embedded PostgreSQL: no free TCP port on 127.0.0.1');
    tried.add(port);
    try {
      return { port, started: await attempt(port, start, '(chosen because SVC_EMBEDDED_PG_PORT is unset)') };
    } catch (err) {
      if (!(err instanceof PortTaken) || i >= ATTEMPTS) throw err;
    }
  }
}

class PortTaken extends Error {}

async function attempt<T>(port: number, start: (port: number) => Promise<T>, note: string): Promise<T> {
  try {
    return await start(port);
  } catch (err) {
    if (!(err instanceof StartFailure)) throw err;
    const message = `Embedded PostgreSQL failed to start on 127.0.0.1:${port} ${note}:\n${err.message}`;
    throw err.portTaken ? new PortTaken(message) : new Error(message);
  }
}
