import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPortal, type TestPortal } from '../../../test-support/portal.ts';

/**
 * Issue 21, point 3, through a real nginx (README "Behind a reverse proxy"): a client cannot
 * choose its address by writing X-Forwarded-For, and distinct real clients (connecting from
 * 127.0.0.2 and 127.0.0.3) are counted separately, for the key throttle and the login lock.
 * Two setups: nginx setting the header with SVC_TRUST_PROXY=127.0.0.1 (what the README
 * recommends), and nginx appending to it ($proxy_add_x_forwarded_for) with SVC_TRUST_PROXY=1.
 */

const NGINX = '/usr/sbin/nginx';

/** A listening socket on 127.0.0.1, kept open and handed to nginx, so no port is ever reused. */
async function listeningSocket(): Promise<{ server: net.Server; port: number; fd: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return { server, port: (server.address() as net.AddressInfo).port, fd };
}

interface Site {
  /** The nginx line that passes X-Forwarded-For on. */
  forwardedFor: string;
  portal: TestPortal;
}

/**
 * nginx in the foreground (`daemon off`) with a temporary prefix, one server per site, each on
 * a socket this process opened and passes down (nginx's inherited-socket variable). Stopped
 * with SIGTERM; `stop` resolves when the master has exited (it waits for its worker).
 */
async function startNginx(sites: Site[]): Promise<{ ports: number[]; stop: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-nginx-'));
  const sockets = await Promise.all(sites.map(() => listeningSocket()));
  let child: ChildProcess | undefined;
  try {
    const servers = sites.map((site, i) => {
      const upstream = new URL(site.portal.url);
      return `server {
    listen 127.0.0.1:${sockets[i]?.port};
    location / {
      proxy_pass http://127.0.0.1:${upstream.port};
      ${site.forwardedFor}
    }
  }`;
    });
    await fs.writeFile(
      path.join(dir, 'nginx.conf'),
      `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  ${servers.join('\n  ')}
}
`,
    );
    const fds = sockets.map((s) => s.fd);
    child = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', 'stderr'], {
      stdio: ['ignore', 'ignore', 'pipe', ...fds],
      env: { NGINX: `${fds.map((_, i) => i + 3).join(';')};` },
    });
  } finally {
    // nginx holds its own copies; ours would accept connections meant for it.
    for (const s of sockets) s.server.close();
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
  void exited.then(() => {
    if (!stopping && stderr !== '') console.error(`nginx exited: ${stderr}`);
  });
  return {
    ports: sockets.map((s) => s.port),
    async stop() {
      stopping = true;
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** One request on a new connection from `localAddress` to nginx. */
function request(
  port: number,
  localAddress: string,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  json?: unknown,
): Promise<{ status: number; body: unknown }> {
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? '' : JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const THROTTLED = { error: 'Too many failed API key attempts from this address, try again later' };

describe.each([
  [
    'nginx sets X-Forwarded-For, SVC_TRUST_PROXY=127.0.0.1',
    'proxy_set_header X-Forwarded-For $remote_addr;',
    '127.0.0.1',
  ],
  [
    'nginx appends to X-Forwarded-For, SVC_TRUST_PROXY=1',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '1',
  ],
])('behind a real nginx: %s', (_name, forwardedFor, trustProxy) => {
  let portal: TestPortal | undefined;
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  let port: number;

  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_TRUST_PROXY: trustProxy, SVC_API_KEY_FAILURES_PER_MINUTE: '3' } });
    nginx = await startNginx([{ forwardedFor, portal }]);
    port = nginx.ports[0] as number;
  });
  afterAll(async () => {
    await nginx?.stop();
    await portal?.close();
  });

  it('a client-written X-Forwarded-For does not escape the key throttle; another real client has its own count', async () => {
    const prefix = `svc_pro_${randomBytes(3).toString('hex')}`;
    const key = () => prefix + randomBytes(29).toString('hex').slice(0, 58);
    for (let i = 0; i < 3; i++) {
      const res = await request(port, '127.0.0.2', 'GET', '/api/license', {
        'x-api-key': key(),
        'x-forwarded-for': `203.0.113.${i + 1}`,
      });
      expect(res.status, `guess ${i}`).toBe(200);
      expect(res.body).toMatchObject({ valid: false, reason: 'not_found' });
    }
    for (const spoofed of ['203.0.113.99', '127.0.0.3', '203.0.113.98, 127.0.0.3']) {
      const res = await request(port, '127.0.0.2', 'GET', '/api/license', {
        'x-api-key': key(),
        'x-forwarded-for': spoofed,
      });
      expect({ spoofed, status: res.status, body: res.body }).toEqual({ spoofed, status: 429, body: THROTTLED });
    }
    // The real 127.0.0.3, same prefix: not throttled.
    const other = await request(port, '127.0.0.3', 'GET', '/api/license', { 'x-api-key': key() });
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ valid: false, reason: 'not_found' });
  });

  it('failed logins lock the real client out whatever it writes, and the owner signs in from another address', async () => {
    const login = (from: string, password: string, spoofed?: string) =>
      request(port, from, 'POST', '/identity/token', spoofed === undefined ? {} : { 'x-forwarded-for': spoofed }, {
        grant_type: 'password',
        username: ADMIN_EMAIL,
        password,
      });
    for (let i = 0; i < 5; i++) {
      const res = await login('127.0.0.2', 'wrong-password-000', `198.51.100.${i + 1}`);
      expect(res.status, `attempt ${i}`).toBe(400);
    }
    const locked = await login('127.0.0.2', 'wrong-password-000', '198.51.100.77');
    expect(locked).toEqual({
      status: 429,
      body: { error: 'too_many_attempts', error_description: 'Too many failed logins; try again later' },
    });
    // Even the right password waits out the lock at that address...
    expect((await login('127.0.0.2', ADMIN_PASSWORD, '127.0.0.3')).status).toBe(429);
    // ...while the real 127.0.0.3 is not locked.
    const owner = await login('127.0.0.3', ADMIN_PASSWORD);
    expect(owner.status).toBe(200);
    expect(owner.body).toMatchObject({ token_type: 'Bearer' });
  });
});
