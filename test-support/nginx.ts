import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Debian's nginx in the foreground (`daemon off`) as a child of the test, with its config,
 * pid, logs and temp files in a temporary prefix. Each server listens on a socket this
 * process opened on 127.0.0.1 port 0 and hands down (nginx's inherited-socket variable), so
 * no port is ever picked, closed and reused.
 */

const NGINX = '/usr/sbin/nginx';

export interface NginxListener {
  server: net.Server;
  port: number;
  fd: number;
}

/** A listening socket on 127.0.0.1, kept open until nginx takes it over. */
export async function nginxListener(): Promise<NginxListener> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return { server, port: (server.address() as net.AddressInfo).port, fd };
}

export interface NginxServer {
  listener: NginxListener;
  /** The server block's body after its `listen` line. */
  body: string;
}

export interface Nginx {
  dir: string;
  /** The master process (its workers are its children). */
  pid: number;
  /** The error log so far. */
  errors(): Promise<string>;
  stop(): Promise<void>;
}

export interface NginxTuning {
  /** `worker_processes` (default 1). */
  workers?: number | 'auto';
  /** Log each request (default on: tests read the log). */
  accessLog?: boolean;
  workerConnections?: number;
}

/** Start nginx with these servers (and `http` block lines, such as upstreams); stopped with SIGTERM. */
export async function startNginx(servers: NginxServer[], httpLines = '', tuning: NginxTuning = {}): Promise<Nginx> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-nginx-'));
  const errorLog = path.join(dir, 'error.log');
  let child: ChildProcess | undefined;
  try {
    const blocks = servers.map(
      (s) => `server {
    listen 127.0.0.1:${s.listener.port};
    ${s.body}
  }`,
    );
    await fs.writeFile(
      path.join(dir, 'nginx.conf'),
      `daemon off;
worker_processes ${tuning.workers ?? 1};
pid ${dir}/nginx.pid;
error_log ${errorLog} warn;
events { worker_connections ${tuning.workerConnections ?? 256}; }
http {
  access_log ${tuning.accessLog === false ? 'off' : `${dir}/access.log`};
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${httpLines}
  ${blocks.join('\n  ')}
}
`,
    );
    const fds = servers.map((s) => s.listener.fd);
    child = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', errorLog], {
      stdio: ['ignore', 'ignore', 'pipe', ...fds],
      env: { NGINX: `${fds.map((_, i) => i + 3).join(';')};` },
    });
  } finally {
    // nginx holds its own copies; ours would accept connections meant for it.
    for (const s of servers) s.listener.server.close();
  }
  const proc = child;
  let stopping = false;
  let stderr = '';
  proc.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', () => resolve());
    proc.once('error', (err) => {
      stderr += String(err);
      resolve();
    });
  });
  const errors = async () => stderr + (await fs.readFile(errorLog, 'utf8').catch(() => ''));
  void exited.then(async () => {
    if (!stopping) console.error(`nginx exited: ${await errors()}`);
  });
  return {
    dir,
    pid: proc.pid ?? -1,
    errors,
    async stop() {
      stopping = true;
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

export interface FromResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON, or '' for an empty body. */
  body: any;
}

/** One JSON request on a new connection from `localAddress` (127.0.0.x) to `port` on 127.0.0.1. */
export function requestFrom(
  port: number,
  localAddress: string,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  json?: unknown,
): Promise<FromResponse> {
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method,
        path: urlPath,
        agent: false,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? '' : JSON.parse(text) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
