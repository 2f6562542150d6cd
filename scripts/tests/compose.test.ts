import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '@svc/portal/config';
import { IMAGE_NAME } from '../release/image.ts';

/**
 * compose.yaml as compose reads it (no container runtime here can pull its PostgreSQL and MinIO
 * images): the portal's image and version are the release's, every long-running service has a
 * health check and a volume, and the environment it gives the portal is a configuration the
 * portal accepts. e2e/release.slow.test.ts runs the image itself.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Record<string, any>>;
  volumes: Record<string, unknown>;
};
const portalVersion = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/portal/package.json'), 'utf8')).version;

/** compose's `${NAME}`, `${NAME:-default}` and `${NAME:?message}` against `env`; `$$` is a dollar. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\{(\w+)(?::([-?])([^}]*))?\}/g, (all, name?: string, op?: string, arg?: string) => {
    if (all === '$$') return '$';
    const v = env[name ?? ''];
    if (v !== undefined && v !== '') return v;
    if (op === '?') throw new Error(`${name}: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

const example = Object.fromEntries(
  fs
    .readFileSync(path.join(ROOT, 'deploy/container/compose.env.example'), 'utf8')
    .split('\n')
    .filter((l) => /^\w+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const filled = {
  ...example,
  SVC_ADMIN_PASSWORD: 'an-Admin-passphrase-for-compose-42',
  SVC_IDENTITY_KEY_ENCRYPTION_KEY: 'ab'.repeat(32),
  POSTGRES_PASSWORD: 'pg-secret',
  S3_SECRET_KEY: 's3-secret-value',
};

describe('compose.yaml', () => {
  it("runs the release's image of this version, read-only, after the database and the bucket", () => {
    const portal = compose.services['portal'];
    expect(portal?.['image']).toBe(`${IMAGE_NAME}:\${SVC_VERSION:-${portalVersion}}`);
    expect(example['SVC_VERSION']).toBe(portalVersion);
    expect(portal?.['read_only']).toBe(true);
    expect(portal?.['depends_on']).toEqual({
      db: { condition: 'service_healthy' },
      bucket: { condition: 'service_completed_successfully' },
    });
  });

  it('gives every long-running service a health check and a named volume', () => {
    for (const name of ['portal', 'db', 's3']) {
      const service = compose.services[name];
      expect(service?.['healthcheck']?.['test'], name).toBeDefined();
      const volumes = (service?.['volumes'] ?? []) as string[];
      expect(volumes.length, name).toBe(1);
      expect(Object.keys(compose.volumes)).toContain(volumes[0]?.split(':')[0]);
    }
  });

  it('gives the portal a configuration it accepts: the database, the S3 bucket, production', () => {
    const env = Object.fromEntries(
      Object.entries(compose.services['portal']?.['environment'] as Record<string, string>).map(([k, v]) => [
        k,
        interpolate(String(v), filled),
      ]),
    );
    const config = loadConfig({ ...env, SVC_DATA_DIR: '/var/lib/svc-portal', HOST: '0.0.0.0', PORT: '8080' });
    expect(config.databaseUrl).toBe('postgres://svc:pg-secret@db:5432/svc');
    expect(config.blobStore).toMatchObject({ kind: 's3', bucket: 'scan-sessions', prefix: 'portal' });
  });

  it('refuses to start without the secrets: compose names the missing one', () => {
    expect(() => interpolate(String(compose.services['db']?.['environment']?.['POSTGRES_PASSWORD']), {})).toThrow(
      'POSTGRES_PASSWORD: set POSTGRES_PASSWORD in .env',
    );
  });
});
