import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { onCleanup } from '../lib/cleanup.ts';

const run = promisify(execFile);
const OPENSSL = '/usr/bin/openssl';

export interface BenchCa {
  dir: string;
  /** PEM of the CA certificate: the portal's SVC_WEBHOOK_CA_FILE. */
  caFile: string;
  caPem: string;
  /** The receivers' key and certificate (EC P-256, SAN IP:127.0.0.1). */
  keyPem: string;
  certPem: string;
}

/**
 * A throw-away CA and one server certificate for 127.0.0.1, made with the openssl CLI in a
 * fresh temp dir that the benchmark's cleanup removes (also on error and SIGINT).
 */
export async function createBenchCa(): Promise<BenchCa> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-webhooks-ca-'));
  fs.chmodSync(dir, 0o755);
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  const p = (f: string): string => path.join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(OPENSSL, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=svc bench webhook CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run(OPENSSL, ['req', ...ec, '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=127.0.0.1']);
  fs.writeFileSync(
    p('ext.cnf'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n',
  );
  await run(OPENSSL, [
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.pem'),
    '-days',
    '2',
    '-extfile',
    p('ext.cnf'),
  ]);
  return {
    dir,
    caFile: p('ca.pem'),
    caPem: fs.readFileSync(p('ca.pem'), 'utf8'),
    keyPem: fs.readFileSync(p('server.key'), 'utf8'),
    certPem: fs.readFileSync(p('server.pem'), 'utf8'),
  };
}
