import fs from 'node:fs';
import { createTestCa } from '@svc/test-support/https-receiver';
import { onCleanup } from '../lib/cleanup.ts';

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
 * The test kit's throw-away CA and server certificate for 127.0.0.1 (test-support/https-receiver.ts),
 * in a temp dir that the benchmark's cleanup removes (also on error and SIGINT).
 */
export async function createBenchCa(): Promise<BenchCa> {
  const ca = await createTestCa([]);
  fs.chmodSync(ca.dir, 0o755);
  onCleanup(
    `remove ${ca.dir}`,
    () => fs.promises.rm(ca.dir, { recursive: true, force: true }),
    () => fs.rmSync(ca.dir, { recursive: true, force: true }),
  );
  return {
    dir: ca.dir,
    caFile: ca.caFile,
    caPem: fs.readFileSync(ca.caFile, 'utf8'),
    keyPem: ca.key,
    certPem: ca.cert,
  };
}
