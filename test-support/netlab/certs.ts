import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface CertFiles {
  cert: string;
  key: string;
}

/** An expired (2020-01-01 to 2021-01-01) self-signed certificate with an RSA-1024 key. */
export function expiredWeakCert(dir: string): CertFiles {
  writeFileSync(
    join(dir, 'expired-ca.cnf'),
    [
      '[ ca ]',
      'default_ca = fx',
      '[ fx ]',
      `database = ${join(dir, 'index.txt')}`,
      `new_certs_dir = ${dir}`,
      `serial = ${join(dir, 'serial')}`,
      'default_md = sha256',
      'policy = any',
      '[ any ]',
      'commonName = supplied',
      '[ req ]',
      'distinguished_name = dn',
      'prompt = no',
      '[ dn ]',
      'CN = weak-tls.netlab.test',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '01\n');
  const key = join(dir, 'expired.key');
  const cert = join(dir, 'expired.pem');
  const cnf = join(dir, 'expired-ca.cnf');
  openssl(
    ['req', '-new', '-newkey', 'rsa:1024', '-nodes', '-keyout', key, '-out', join(dir, 'expired.csr')].concat([
      '-config',
      cnf,
    ]),
  );
  openssl(
    ['ca', '-batch', '-selfsign', '-config', cnf, '-keyfile', key, '-in', join(dir, 'expired.csr')].concat([
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20210101000000Z',
      '-out',
      cert,
    ]),
  );
  return { cert, key };
}

/** A test CA and a current RSA-2048 server certificate it signed for `name`. */
export function validCert(dir: string, name: string): CertFiles & { ca: string } {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '30'].concat([
      '-subj',
      '/CN=svc netlab test CA',
    ]),
  );
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const ext = join(dir, `${name}.ext`);
  writeFileSync(ext, `subjectAltName = DNS:${name}\nextendedKeyUsage = serverAuth\n`);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${name}`]);
  openssl(
    ['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-days', '30', '-sha256'].concat([
      '-extfile',
      ext,
      '-out',
      cert,
    ]),
  );
  return { ca, cert, key };
}
