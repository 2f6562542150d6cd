import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '@svc/test-support/cli';
import { type DebianChroot, debianChroot } from './helpers/debian-chroot.ts';
import { withToken } from '@svc/test-support/http';
import { freePort } from '@svc/test-support/ports';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login } from '@svc/test-support/portal';
import { until } from '@svc/test-support/wait';
import { databaseOverTcp, podman, readyz } from './helpers/release.ts';
import { listenOldSshBanner } from './helpers/ssh-banner.ts';

const exec = promisify(execFile);

/**
 * The release as an operator gets it: `npm run release`'s build writes every artifact
 * with its checksums; the container image runs as its user on a read-only root; and on a fresh
 * Debian 12 root file system (debootstrap, no file of this repository inside) apt installs the
 * client packages, the portal archive starts on an external PostgreSQL and on its embedded
 * default, and a real `svc scan --upload` from the installed package lands in it.
 */

const portalVersion = JSON.parse(await fs.readFile(path.join(REPO, 'packages/portal/package.json'), 'utf8')).version;
const clientVersion = JSON.parse(await fs.readFile(path.join(REPO, 'packages/client/package.json'), 'utf8')).version;
const PORTAL_ARCHIVE = `svc-portal-${portalVersion}-linux-amd64.tar.gz`;
const IMAGE = `localhost/svc-portal:${portalVersion}`;
const ARTIFACTS = [
  PORTAL_ARCHIVE,
  `svc-client-${clientVersion}-linux-amd64.tar.gz`,
  `svc-client-${clientVersion}-linux-arm64.tar.gz`,
  `svc_${clientVersion}_amd64.deb`,
  `svc_${clientVersion}_arm64.deb`,
  `svcd_${clientVersion}_amd64.deb`,
  `svcd_${clientVersion}_arm64.deb`,
  `svc-portal-${portalVersion}-image.tar`,
].sort();

let out: string;
const artifact = (name: string) => path.join(out, name);

beforeAll(async () => {
  out = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-release-test-'));
  await exec(path.join(REPO, 'node_modules/.bin/node'), ['scripts/release/build.ts', '--out', out, '--prebuilt-web'], {
    cwd: REPO,
    timeout: 20 * 60_000,
    maxBuffer: 16 << 20,
  });
}, 20 * 60_000);

afterAll(async () => {
  if (out) await fs.rm(out, { recursive: true, force: true });
});

describe('npm run release', () => {
  it('writes every artifact, and SHA256SUMS checks each of them', async () => {
    const files = (await fs.readdir(out)).sort();
    expect(files).toEqual([...ARTIFACTS, 'SHA256SUMS'].sort());
    const sums = await fs.readFile(artifact('SHA256SUMS'), 'utf8');
    expect(
      sums
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[1])
        .sort(),
    ).toEqual(ARTIFACTS);
    const { stdout } = await exec('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(stdout.trim().split('\n')).toHaveLength(ARTIFACTS.length);
    expect(stdout).not.toMatch(/FAILED/);
  });

  it('the portal archive: the bundle, production dependencies only, Node 24, the console and the unit', async () => {
    const { stdout } = await exec('tar', ['-tzf', artifact(PORTAL_ARCHIVE)], { maxBuffer: 64 << 20 });
    const top = `svc-portal-${portalVersion}-linux-amd64/`;
    const names = stdout.split('\n');
    for (const f of [
      'bin/svc-portal',
      'lib/portal.mjs',
      'lib/backup.mjs',
      'node/bin/node',
      'web/index.html',
      'systemd/svc-portal.service',
      'INSTALL',
      'VERSION',
    ])
      expect(names, f).toContain(top + f);
    expect(names.some((n) => n.startsWith(`${top}lib/node_modules/fastify/`))).toBe(true);
    // Development dependencies and the sources stay out.
    for (const dev of ['vitest', 'typescript', '@biomejs', 'playwright-core', 'rolldown', 'knip'])
      expect(
        names.some((n) => n.startsWith(`${top}lib/node_modules/${dev}/`)),
        dev,
      ).toBe(false);
    // No TypeScript at all: ours is bundled, and Node never runs a package's own .ts files.
    expect(names.filter((n) => n.endsWith('.ts'))).toEqual([]);
  });

  it('the client packages: dependencies, the arm64 package carries an arm64 Node', async () => {
    const field = async (deb: string, name: string) =>
      (await exec('dpkg-deb', ['-f', artifact(deb), name])).stdout.trim();
    expect(await field(`svc_${clientVersion}_amd64.deb`, 'Depends')).toBe('nmap, ca-certificates');
    expect(await field(`svcd_${clientVersion}_arm64.deb`, 'Depends')).toBe(`svc (= ${clientVersion}), passwd`);
    expect(await field(`svc_${clientVersion}_arm64.deb`, 'Architecture')).toBe('arm64');
    const unpacked = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-deb-'));
    try {
      await exec('dpkg-deb', ['-x', artifact(`svc_${clientVersion}_arm64.deb`), unpacked]);
      const elf = Buffer.alloc(20);
      const fh = await fs.open(path.join(unpacked, 'usr/lib/svc/node/bin/node'));
      await fh.read(elf, 0, 20, 0);
      await fh.close();
      expect(elf.readUInt16LE(18)).toBe(183); // EM_AARCH64
    } finally {
      await fs.rm(unpacked, { recursive: true, force: true });
    }
  });
});

describe('the container image', () => {
  const names: string[] = [];
  const volume = `svc-release-test-${process.pid}`;

  beforeAll(async () => {
    const loaded = await podman('load', '--quiet', '--input', artifact(`svc-portal-${portalVersion}-image.tar`));
    expect(loaded.stdout + loaded.stderr).toContain(IMAGE);
  });
  afterAll(async () => {
    for (const name of names) await podman('rm', '--force', '--volumes', name);
    await podman('volume', 'rm', '--force', volume);
    await podman('rmi', '--force', IMAGE);
  });

  /** The image started read-only on the host's network (127.0.0.1 only); resolves once /readyz answers 200. */
  async function run(env: Record<string, string>, extra: string[] = []): Promise<{ name: string; port: number }> {
    const name = `svc-release-test-${process.pid}-${names.length}`;
    names.push(name);
    const port = await freePort();
    const envArgs = Object.entries({
      HOST: '127.0.0.1',
      PORT: String(port),
      SVC_ADMIN_EMAIL: ADMIN_EMAIL,
      SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...env,
    }).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const started = await podman(
      'run',
      '--detach',
      '--name',
      name,
      '--read-only',
      '--network=host',
      ...envArgs,
      ...extra,
      IMAGE,
    );
    expect(started.code, started.stderr).toBe(0);
    const running = async () =>
      (await podman('container', 'inspect', name, '--format', '{{.State.Running}}')).stdout.trim() === 'true';
    await until(
      async () => (await readyz(port)) === 200 || !(await running()),
      180_000,
      () => `the container ${name} to answer /readyz`,
    );
    expect(await running(), (await podman('logs', name)).stderr).toBe(true);
    return { name, port };
  }

  it('is configured as documented: its own user, the data volume, port 8080, a health check', async () => {
    const { stdout } = await podman('image', 'inspect', IMAGE, '--format', 'json');
    const [image] = JSON.parse(stdout) as { Config: Record<string, any>; Labels?: Record<string, string> }[];
    expect(image?.Config.User).toBe('10001:10001');
    expect(Object.keys(image?.Config.Volumes ?? {})).toEqual(['/var/lib/svc-portal']);
    expect(Object.keys(image?.Config.ExposedPorts ?? {})).toEqual(['8080/tcp']);
    expect(image?.Config.Entrypoint).toEqual(['/opt/svc-portal/bin/svc-portal']);
    expect(image?.Config.Labels?.['org.opencontainers.image.version']).toBe(portalVersion);
  });

  it('runs on an external PostgreSQL as user 10001 with a read-only root, and its health check passes', async () => {
    const { name } = await run({ DATABASE_URL: await databaseOverTcp() });
    expect((await podman('exec', name, 'id', '-u')).stdout.trim()).toBe('10001');
    const write = await podman('exec', name, 'touch', '/opt/svc-portal/x');
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('Read-only file system');
    expect((await podman('healthcheck', 'run', name)).code).toBe(0);
  });

  it('runs on its embedded PostgreSQL, kept in the data volume', async () => {
    const { name } = await run({}, ['--volume', `${volume}:/var/lib/svc-portal`]);
    const { stdout } = await podman('exec', name, 'ls', '/var/lib/svc-portal');
    expect(stdout.split('\n')).toEqual(expect.arrayContaining(['postgres', 'identity-key', 'blobs']));
  });
});

describe('install on a fresh Debian 12 root file system', () => {
  let root: DebianChroot;
  let install: { code: number; stdout: string; stderr: string };
  const PORTAL_UID = '10001';

  beforeAll(async () => {
    root = await debianChroot();
    for (const f of [`svc_${clientVersion}_amd64.deb`, `svcd_${clientVersion}_amd64.deb`, PORTAL_ARCHIVE])
      await root.put(artifact(f), `/root/${f}`);
    const update = await root.run(['apt-get', 'update', '-q'], { timeoutMs: 10 * 60_000 });
    expect(update.code, update.stderr).toBe(0);
    install = await root.run(
      [
        'apt-get',
        'install',
        '-y',
        '-q',
        '--no-install-recommends',
        `/root/svc_${clientVersion}_amd64.deb`,
        `/root/svcd_${clientVersion}_amd64.deb`,
      ],
      { timeoutMs: 10 * 60_000 },
    );
    expect(install.code, install.stderr).toBe(0);
    // The portal as its INSTALL says: unpacked in /opt/svc-portal, run by its own user.
    const steps = [
      ['tar', '-xzf', `/root/${PORTAL_ARCHIVE}`, '-C', '/opt'],
      ['mv', `/opt/svc-portal-${portalVersion}-linux-amd64`, '/opt/svc-portal'],
      [
        'useradd',
        '--system',
        '--uid',
        PORTAL_UID,
        '--user-group',
        '--home-dir',
        '/var/lib/svc-portal',
        '--shell',
        '/usr/sbin/nologin',
        'svc-portal',
      ],
      ['install', '-d', '-o', 'svc-portal', '-g', 'svc-portal', '-m', '700', '/var/lib/svc-portal'],
    ];
    for (const step of steps) {
      const r = await root.run(step);
      expect(r.code, `${step.join(' ')}: ${r.stderr}`).toBe(0);
    }
  }, 20 * 60_000);

  afterAll(async () => {
    await root?.close();
  });

  it('apt installs svc and svcd: the commands, the agent user, its unit and directories', async () => {
    expect((await root.run(['svc', '--version'])).stdout.trim()).toBe(clientVersion);
    expect((await root.run(['svcd', '--version'])).stdout.trim()).toBe(clientVersion);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format, not a template.
    expect((await root.run(['dpkg-query', '-W', '-f', '${Status}', 'nmap'])).stdout).toBe('install ok installed');
    expect((await root.run(['getent', 'passwd', 'svc'])).stdout).toMatch(
      /^svc:x:\d+:\d+::\/var\/lib\/svc:\/usr\/sbin\/nologin\n$/,
    );
    expect((await root.run(['stat', '-c', '%a %U %G', '/etc/svc/configs', '/var/lib/svc'])).stdout).toBe(
      '700 svc svc\n700 svc svc\n',
    );
    const unit = await fs.readFile(path.join(root.dir, 'lib/systemd/system/svcd.service'), 'utf8');
    expect(unit).toContain('ExecStart=/usr/lib/svc/bin/svcd --config-dir /etc/svc/configs');
    expect(unit).toContain('ConditionPathExistsGlob=/etc/svc/configs/*.conf');
    // No systemd in a chroot: the package says so instead of failing.
    expect(install.stdout).toContain('svcd: systemd is not running here');
  });

  it("svcd's package enables its unit on a systemd host, and starts it only once a config is there", async () => {
    // No systemd runs in a chroot: a systemctl on the PATH before Debian's records what the
    // maintainer script asks of it, and /run/systemd/system says systemd is the init.
    await fs.mkdir(path.join(root.dir, 'run/systemd/system'), { recursive: true });
    const recorder = path.join(root.dir, 'usr/local/sbin/systemctl');
    await fs.writeFile(recorder, '#!/bin/sh\necho "$*" >> /tmp/systemctl.log\n', { mode: 0o755 });
    const calls = async () => (await fs.readFile(path.join(root.dir, 'tmp/systemctl.log'), 'utf8')).trim().split('\n');
    try {
      const bare = await root.run(['/var/lib/dpkg/info/svcd.postinst', 'configure']);
      expect(bare.code, bare.stderr).toBe(0);
      expect(bare.stdout).toContain('svcd: enabled; it starts once a config is in /etc/svc/configs');
      expect(await calls()).toEqual(['daemon-reload', 'enable svcd.service']);

      await fs.writeFile(
        path.join(root.dir, 'etc/svc/configs/portal.conf'),
        'CONSULTATION_API_URL=http://127.0.0.1:9/api/upload\n',
      );
      await fs.rm(path.join(root.dir, 'tmp/systemctl.log'));
      expect((await root.run(['/var/lib/dpkg/info/svcd.postinst', 'configure'])).code).toBe(0);
      expect(await calls()).toEqual(['daemon-reload', 'enable svcd.service', 'restart svcd.service']);
    } finally {
      await fs.rm(recorder);
      await fs.rm(path.join(root.dir, 'run/systemd'), { recursive: true });
      await fs.rm(path.join(root.dir, 'etc/svc/configs/portal.conf'), { force: true });
    }
  });

  /** The portal from its archive, as its user; resolves once /readyz answers 200. */
  async function startPortal(env: Record<string, string>): Promise<{ port: number; stop(): Promise<void> }> {
    const port = await freePort();
    const started = root.start(['/opt/svc-portal/bin/svc-portal'], {
      user: `${PORTAL_UID}:${PORTAL_UID}`,
      env: {
        HOME: '/var/lib/svc-portal',
        SVC_DATA_DIR: '/var/lib/svc-portal',
        PORT: String(port),
        SVC_ADMIN_EMAIL: ADMIN_EMAIL,
        SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
        ...env,
      },
    });
    const exited = new Promise<number | null>((resolve) => started.child.on('exit', resolve));
    await until(
      async () => (await readyz(port)) === 200 || started.child.exitCode !== null,
      180_000,
      () => 'the installed portal to answer /readyz',
    );
    expect(started.child.exitCode, started.output()).toBeNull();
    return {
      port,
      async stop() {
        started.child.kill('SIGTERM');
        expect(await exited, started.output()).toBe(0);
      },
    };
  }

  it('the portal archive starts on an external PostgreSQL', async () => {
    const portal = await startPortal({ DATABASE_URL: await databaseOverTcp() });
    await portal.stop();
  });

  it('on its embedded default: a real `svc scan --upload` and the packaged svcd reach it', async () => {
    const portal = await startPortal({});
    let banner: net.Server | undefined;
    try {
      const base = `http://127.0.0.1:${portal.port}`;
      const token = await login(base, ADMIN_EMAIL, ADMIN_PASSWORD);
      const auth = { ...withToken(token), 'content-type': 'application/json' };
      const created = await fetch(`${base}/api/licenses`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ tier: 'business', client_id: 'release-install', name: 'scanner' }),
      });
      expect(created.status).toBe(201);
      const key = ((await created.json()) as { license: { plaintext_key: string } }).license.plaintext_key;
      const ssh = await listenOldSshBanner();
      banner = ssh.server;
      const scan = await root.run(
        ['svc', 'scan', '--targets', '127.0.0.1', '--ports', `T:${ssh.port}`, '--upload', '--json'],
        {
          env: { CONSULTATION_API_URL: `${base}/api/upload`, SVC_API_KEY: key },
          timeoutMs: 5 * 60_000,
        },
      );
      expect(scan.code, scan.stderr).toBe(0);
      const result = JSON.parse(scan.stdout) as { session_id: string; upload: { session_id: string } };
      expect(result.upload.session_id).toBe(result.session_id);
      const listed = await fetch(`${base}/api/sessions?client_id=release-install`, { headers: auth });
      const body = (await listed.json()) as { sessions: { session_id: string }[] };
      expect(body.sessions.map((s) => s.session_id)).toEqual([result.session_id]);

      // The packaged daemon, as its unit runs it (user svc, its configs and state), one cycle.
      const conf = path.join(root.dir, 'etc/svc/configs/agent.conf');
      await fs.writeFile(
        conf,
        `CONSULTATION_API_URL=${base}/api/upload\nSVC_API_KEY=${key}\nSVC_AGENT_ID=svcd_release\n`,
        { mode: 0o600 },
      );
      expect((await root.run(['chown', 'svc:svc', '/etc/svc/configs/agent.conf'])).code).toBe(0);
      const ids = (await root.run(['sh', '-c', 'echo "$(id -u svc):$(id -g svc)"'])).stdout.trim();
      const once = await root.run(['svcd', '--once', '--config-dir', '/etc/svc/configs'], {
        user: ids,
        env: { HOME: '/var/lib/svc', SVC_AGENT_STATE_DIR: '/var/lib/svc/agent' },
      });
      expect(once.code, once.stdout + once.stderr).toBe(0);
      const fleet = await fetch(`${base}/api/health?agents=true`, { headers: auth });
      const agents = ((await fleet.json()) as { agents: { agent_id: string; version: string }[] }).agents;
      expect(agents.map((a) => [a.agent_id, a.version])).toEqual([['svcd_release', clientVersion]]);
    } finally {
      await new Promise<void>((resolve) => (banner ? banner.close(() => resolve()) : resolve()));
      await portal.stop();
    }
  });
});
