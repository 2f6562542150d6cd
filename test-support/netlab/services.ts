import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CertFiles } from './certs.ts';

/** A daemon the harness runs in the foreground inside a namespace. */
export interface ServiceSpec {
  name: string;
  argv: string[];
  /** Runs as this user (via runuser) when the daemon refuses root. */
  user?: string;
  env?: Record<string, string>;
  /** The socket that says it is ready. */
  ready: { proto: 'tcp' | 'udp'; port: number };
}

function dirIn(base: string, name: string, mode = 0o755): string {
  const d = join(base, name);
  mkdirSync(d, { recursive: true, mode });
  chmodSync(d, mode);
  return d;
}

function write(path: string, lines: readonly string[]): string {
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o644 });
  return path;
}

/** vsftpd with anonymous login and no TLS. */
export function vsftpd(dir: string, addr: string): ServiceSpec {
  const root = dirIn(dir, 'ftp-root');
  write(join(root, 'README.txt'), ['public files']);
  const empty = dirIn(dir, 'vsftpd-empty');
  const conf = write(join(dir, 'vsftpd.conf'), [
    'listen=YES',
    'listen_ipv6=NO',
    `listen_address=${addr}`,
    'background=NO',
    'anonymous_enable=YES',
    'no_anon_password=YES',
    'local_enable=NO',
    'write_enable=NO',
    `anon_root=${root}`,
    `secure_chroot_dir=${empty}`,
    'ftp_username=ftp',
    'nopriv_user=nobody',
    'seccomp_sandbox=NO',
    'isolate=NO',
    'isolate_network=NO',
    'xferlog_enable=NO',
  ]);
  return { name: 'vsftpd', argv: ['/usr/sbin/vsftpd', conf], ready: { proto: 'tcp', port: 21 } };
}

/** telnetd from inetutils, started per connection by inetutils-inetd in the foreground (-d). */
export function telnetd(dir: string, addr: string): ServiceSpec {
  const conf = write(join(dir, 'inetd.conf'), [`${addr}:telnet stream tcp nowait root /usr/sbin/telnetd telnetd`]);
  return { name: 'telnetd', argv: ['/usr/sbin/inetutils-inetd', '-d', conf], ready: { proto: 'tcp', port: 23 } };
}

/**
 * net-snmp answering the community "public". It runs in its own PID namespace with its own /proc,
 * so the process table it serves (HOST-RESOURCES-MIB) holds only itself, not this machine's processes.
 */
export function snmpd(dir: string, addr: string): ServiceSpec {
  const state = dirIn(dir, 'snmp-state', 0o700);
  const conf = write(join(dir, 'snmpd.conf'), ['rocommunity public default', 'sysLocation netlab', 'sysContact none']);
  return {
    name: 'snmpd',
    argv: [
      '/usr/bin/unshare',
      '--pid',
      '--fork',
      '--mount-proc',
      '/usr/sbin/snmpd',
      '-f',
      '-Lo',
      '-C',
      '-c',
      conf,
      '-p',
      join(dir, 'snmpd.pid'),
      `udp:${addr}:161`,
    ],
    env: { SNMP_PERSISTENT_DIR: state, MIBS: '' },
    ready: { proto: 'udp', port: 161 },
  };
}

/** Redis without a password or protected mode. */
export function redis(dir: string, addr: string): ServiceSpec {
  const data = dirIn(dir, 'redis', 0o700);
  return {
    name: 'redis',
    argv: ['/usr/bin/redis-server', '--bind', addr, '--port', '6379', '--protected-mode', 'no', '--save', ''].concat([
      '--appendonly',
      'no',
      '--dir',
      data,
      '--daemonize',
      'no',
      '--logfile',
      '',
    ]),
    ready: { proto: 'tcp', port: 6379 },
  };
}

/** memcached without SASL, UDP off. */
export function memcached(addr: string): ServiceSpec {
  return {
    name: 'memcached',
    argv: ['/usr/bin/memcached', '-u', 'nobody', '-l', addr, '-p', '11211', '-U', '0'],
    ready: { proto: 'tcp', port: 11211 },
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** PostgreSQL listening on every address with trust authentication, in a cluster made here. */
export function postgres(dir: string): ServiceSpec {
  const data = join(dir, 'pgdata');
  const sock = dirIn(dir, 'pgsock');
  mkdirSync(data, { mode: 0o700 });
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(data, uid, gid);
  chownSync(sock, uid, gid);
  execFileSync(
    'runuser',
    ['-u', 'postgres', '--', `${PG_BIN}/initdb`, '-D', data, '-A', 'trust', '-U', 'postgres'].concat([
      '--no-sync',
      '--no-instructions',
    ]),
    { stdio: 'ignore' },
  );
  writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 0.0.0.0/0 trust\n');
  return {
    name: 'postgres',
    user: 'postgres',
    argv: [`${PG_BIN}/postgres`, '-D', data, '-c', 'listen_addresses=*', '-c', 'port=5432'].concat([
      '-c',
      `unix_socket_directories=${sock}`,
      '-c',
      'fsync=off',
    ]),
    ready: { proto: 'tcp', port: 5432 },
  };
}

function nginxConf(dir: string, name: string, server: readonly string[]): string {
  const tmp = dirIn(dir, `${name}-tmp`);
  return write(join(dir, `${name}.conf`), [
    'daemon off;',
    'worker_processes 1;',
    'user nobody nogroup;',
    `pid ${join(dir, `${name}.pid`)};`,
    `error_log ${join(dir, `${name}-error.log`)};`,
    'events { worker_connections 64; }',
    'http {',
    '  access_log off;',
    '  default_type text/plain;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(tmp, t)};`),
    '  server {',
    ...server.map((l) => `    ${l}`),
    '  }',
    '}',
  ]);
}

function nginx(dir: string, name: string, conf: string, port: number): ServiceSpec {
  return {
    name,
    argv: ['/usr/sbin/nginx', '-e', join(dir, `${name}-error.log`), '-p', dir, '-c', conf],
    ready: { proto: 'tcp', port },
  };
}

/** nginx over plain HTTP with a directory listing and no security headers. */
export function nginxListing(dir: string, addr: string): ServiceSpec {
  const www = dirIn(dir, 'www');
  dirIn(www, 'backups');
  write(join(www, 'backups', 'db.sql'), ['-- dump']);
  write(join(www, 'notes.txt'), ['notes']);
  const conf = nginxConf(dir, 'nginx-listing', [`listen ${addr}:80;`, `root ${www};`, 'autoindex on;']);
  return nginx(dir, 'nginx-listing', conf, 80);
}

/** nginx with TLS 1.2/1.3 only, a certificate from the test CA and the security headers. */
export function nginxHardened(dir: string, addr: string, cert: CertFiles): ServiceSpec {
  const conf = nginxConf(dir, 'nginx-hardened', [
    `listen ${addr}:443 ssl;`,
    'server_name hardened.netlab.test;',
    'server_tokens off;',
    `ssl_certificate ${cert.cert};`,
    `ssl_certificate_key ${cert.key};`,
    'ssl_protocols TLSv1.2 TLSv1.3;',
    'ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305;',
    'ssl_prefer_server_ciphers on;',
    'add_header Strict-Transport-Security "max-age=63072000" always;',
    `add_header Content-Security-Policy "default-src 'self'; frame-ancestors 'none'" always;`,
    'add_header X-Frame-Options DENY always;',
    'add_header X-Content-Type-Options nosniff always;',
    'location / { return 200 "hardened\\n"; }',
  ]);
  return nginx(dir, 'nginx-hardened', conf, 443);
}

/** `openssl s_server` with the expired RSA-1024 certificate, TLS 1.0 to 1.2 and weak ciphers allowed. */
export function weakTls(addr: string, cert: CertFiles): ServiceSpec {
  return {
    name: 'openssl-s_server',
    argv: [
      '/usr/bin/openssl',
      's_server',
      '-quiet',
      '-accept',
      `${addr}:443`,
      '-cert',
      cert.cert,
      '-key',
      cert.key,
    ].concat(['-www', '-no_tls1_3', '-cipher', 'DEFAULT:@SECLEVEL=0']),
    ready: { proto: 'tcp', port: 443 },
  };
}

interface SshdOptions {
  name: string;
  addr: string;
  port: number;
  /** [type, bits] of each host key ('' for the type's only size). */
  hostKeys: readonly (readonly [string, string])[];
  /** sshd_config lines after the common ones. */
  config: readonly string[];
}

function sshdWith(dir: string, o: SshdOptions): ServiceSpec {
  const keys = dirIn(dir, o.name, 0o700);
  const keyFiles = o.hostKeys.map(([type, bits]) => {
    const file = join(keys, `ssh_host_${type}_key`);
    execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-f', file]);
    return file;
  });
  // Debian's sshd requires its privilege separation directory; the package creates it at start.
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const conf = write(join(dir, `${o.name}_config`), [
    `Port ${o.port}`,
    `ListenAddress ${o.addr}`,
    ...keyFiles.map((f) => `HostKey ${f}`),
    `PidFile ${join(dir, `${o.name}.pid`)}`,
    'UsePAM no',
    'PermitRootLogin no',
    ...o.config,
  ]);
  return { name: o.name, argv: ['/usr/sbin/sshd', '-D', '-e', '-f', conf], ready: { proto: 'tcp', port: o.port } };
}

/** OpenSSH: with `weak`, legacy algorithms and a 1024-bit RSA host key; otherwise Debian's defaults. */
export function sshd(dir: string, addr: string, weak: boolean): ServiceSpec {
  if (!weak)
    return sshdWith(dir, {
      name: 'sshd-hardened',
      addr,
      port: 22,
      hostKeys: [
        ['ed25519', ''],
        ['rsa', '3072'],
      ],
      config: [],
    });
  return sshdWith(dir, {
    name: 'sshd-weak',
    addr,
    port: 22,
    hostKeys: [['rsa', '1024']],
    config: [
      'KexAlgorithms +diffie-hellman-group1-sha1,diffie-hellman-group14-sha1',
      'HostKeyAlgorithms +ssh-rsa',
      'Ciphers +aes128-cbc,3des-cbc',
      'MACs +hmac-md5,hmac-sha1-96',
    ],
  });
}

/** OpenSSH with curve25519 as its only key exchange: no Diffie-Hellman group a key fetch of nmap's library can run. */
export function sshdCurveOnly(dir: string, addr: string, port: number): ServiceSpec {
  return sshdWith(dir, {
    name: 'sshd-curve-only',
    addr,
    port,
    hostKeys: [['rsa', '3072']],
    config: ['KexAlgorithms curve25519-sha256'],
  });
}

/**
 * A node server that only announces an old version, for the outdated-version rule. It hangs up
 * once the client speaks (or after 3 s): scripts waiting for a key exchange would otherwise wait
 * for their whole timeout.
 */
export function bannerServer(addr: string, port: number, banner: string): ServiceSpec {
  const script = `require('net').createServer(s=>{s.write(${JSON.stringify(`${banner}\r\n`)});s.setTimeout(3000,()=>s.destroy());s.on('data',()=>s.end());s.on('error',()=>{})}).listen(${port},${JSON.stringify(addr)})`;
  return { name: 'banner', argv: [process.execPath, '-e', script], ready: { proto: 'tcp', port } };
}

/**
 * A front for a TCP service on the same host that hangs up on its 1st and 3rd connection and
 * passes every other one through: a server on which a script's first try of each step fails.
 */
export function hangsUpTwice(addr: string, port: number, targetPort: number): ServiceSpec {
  const script = `const net=require('net');let n=0;net.createServer(s=>{n+=1;if(n===1||n===3){s.destroy();return}const u=net.connect(${targetPort},${JSON.stringify(addr)});s.pipe(u).pipe(s);s.on('error',()=>u.destroy());u.on('error',()=>s.destroy())}).listen(${port},${JSON.stringify(addr)})`;
  return { name: 'hangs-up-twice', argv: [process.execPath, '-e', script], ready: { proto: 'tcp', port } };
}

/** Samba with SMBv1 allowed and signing disabled, one read-only guest share. */
export function smbd(dir: string, addr: string): ServiceSpec {
  const base = dirIn(dir, 'samba');
  const sub = (n: string) => dirIn(base, n);
  const share = sub('share');
  write(join(share, 'README.txt'), ['public share']);
  const conf = write(join(base, 'smb.conf'), [
    '[global]',
    'workgroup = NETLAB',
    'server role = standalone server',
    `interfaces = ${addr}`,
    'bind interfaces only = yes',
    'smb ports = 445',
    'disable netbios = yes',
    'server min protocol = NT1',
    'server signing = disabled',
    'map to guest = bad user',
    'load printers = no',
    'printcap name = /dev/null',
    'disable spoolss = yes',
    `lock directory = ${sub('lock')}`,
    `state directory = ${sub('state')}`,
    `cache directory = ${sub('cache')}`,
    `private dir = ${sub('private')}`,
    `pid directory = ${sub('run')}`,
    `ncalrpc dir = ${sub('ncalrpc')}`,
    `binddns dir = ${sub('bind-dns')}`,
    `log file = ${join(base, 'log.%m')}`,
    '[public]',
    `path = ${share}`,
    'guest ok = yes',
    'read only = yes',
  ]);
  return {
    name: 'smbd',
    argv: ['/usr/sbin/smbd', '-F', '--no-process-group', '--debug-stdout', '-s', conf],
    ready: { proto: 'tcp', port: 445 },
  };
}

/**
 * BIND serving the zone `netlab.test` as its primary: zone transfer allowed to anyone, no SPF and
 * no DMARC record at the apex, `relaxed.` with SPF `+all` and DMARC `p=none`, `strict.` with both
 * strict, recursion off. `named -g` stays in the foreground and logs to stderr.
 */
export function named(dir: string, addr: string, records: Readonly<Record<string, string>>): ServiceSpec {
  const base = dirIn(dir, 'named');
  const zone = write(join(base, 'netlab.test.zone'), [
    '$TTL 300',
    '@ IN SOA ns.netlab.test. hostmaster.netlab.test. 1 3600 600 86400 300',
    '@ IN NS ns.netlab.test.',
    `ns IN A ${addr}`,
    '@ IN TXT "netlab test zone"',
    // Subdomains with their own mail policy: one too permissive, one strict (no finding expected).
    'relaxed IN TXT "v=spf1 +all"',
    '_dmarc.relaxed IN TXT "v=DMARC1; p=none"',
    'strict IN TXT "v=spf1 -all"',
    '_dmarc.strict IN TXT "v=DMARC1; p=reject"',
    ...Object.entries(records).map(([name, a]) => `${name} IN A ${a}`),
  ]);
  const conf = write(join(base, 'named.conf'), [
    'options {',
    `  directory "${base}";`,
    `  pid-file "${join(base, 'named.pid')}";`,
    `  session-keyfile "${join(base, 'session.key')}";`,
    `  listen-on port 53 { ${addr}; };`,
    '  listen-on-v6 { none; };',
    '  recursion no;',
    '  dnssec-validation no;',
    '  allow-transfer { any; };',
    '};',
    `zone "netlab.test" { type primary; file "${zone}"; };`,
  ]);
  // named drops to the bind user and writes its session key and pid there.
  const uid = Number(execFileSync('id', ['-u', 'bind'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'bind'], { encoding: 'utf8' }).trim());
  chownSync(base, uid, gid);
  return {
    name: 'named',
    argv: ['/usr/sbin/named', '-g', '-4', '-u', 'bind', '-c', conf],
    ready: { proto: 'tcp', port: 53 },
  };
}
