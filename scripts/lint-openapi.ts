/**
 * Lints the OpenAPI document the portal publishes at /api/openapi.json with Redocly's
 * recommended rules plus redocly.yaml (npm run lint:openapi). It starts the real portal
 * (on DATABASE_URL when set, else on the embedded server in a temporary data directory),
 * fetches the document over HTTP, writes it to a temporary file and runs `redocly lint`;
 * the exit code is the linter's, non-zero on any error. Further arguments go to the linter
 * (`--format json` prints its report as JSON on stdout).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@svc/portal/config';
import { startPortal } from '@svc/portal/server';
import { freePort } from '@svc/test-support/ports';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const redocly = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/** The document as a client gets it, from a portal started only for this. */
async function fetchDocument(dataDir: string): Promise<string> {
  // Only the settings named here: an SVC_JWT_JWKS_URL in the caller's environment would drop
  // the /identity routes from the document.
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    SVC_BASE_URL: 'http://127.0.0.1:8080',
    SVC_LOG_LEVEL: 'error',
    DATABASE_URL: process.env['DATABASE_URL'],
    // Not the default port, which a portal running on this machine may hold.
    SVC_EMBEDDED_PG_PORT: String(await freePort()),
    // GET /metrics is in the document only while it is served.
    SVC_METRICS_TOKEN: randomBytes(32).toString('hex'),
  });
  const portal = await startPortal(config);
  try {
    const res = await fetch(`${portal.url}/api/openapi.json`);
    if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}`);
    return await res.text();
  } finally {
    await portal.close();
  }
}

function lint(file: string, args: string[]): Promise<number> {
  const argv = [
    redocly,
    'lint',
    '--extends',
    'recommended',
    '--config',
    path.join(root, 'redocly.yaml'),
    ...args,
    file,
  ];
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-openapi-lint-'));
try {
  // The embedded PostgreSQL runs as the postgres user when this runs as root.
  await fs.chmod(work, 0o755);
  const dataDir = path.join(work, 'data');
  await fs.mkdir(dataDir, { mode: 0o755 });
  const file = path.join(work, 'openapi.json');
  await fs.writeFile(file, await fetchDocument(dataDir));
  process.exitCode = await lint(file, process.argv.slice(2));
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await fs.rm(work, { recursive: true, force: true });
}
