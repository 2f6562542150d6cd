import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

describe('GET /api/health', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_ENVIRONMENT: 'deploy-preview' } });
  });
  afterAll(() => portal.close());

  it('answers status, version, timestamp and environment without credentials', async () => {
    const before = Date.now();
    const res = await http(portal.url, 'GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['environment', 'status', 'timestamp', 'version']);
    expect(res.body.status).toBe('ok');
    expect(res.body.version).toBe('1.24.0');
    expect(res.body.environment).toBe('deploy-preview');
    expect(Date.parse(res.body.timestamp)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('reports environment "unknown" when SVC_ENVIRONMENT is unset', async () => {
    const other = await startTestPortal({ databaseUrl: portal.databaseUrl });
    try {
      const res = await http(other.url, 'GET', '/api/health');
      expect(res.body.environment).toBe('unknown');
    } finally {
      await other.close();
    }
  });

  it('answers unknown paths with a JSON 404 in the common error shape', async () => {
    const res = await http(portal.url, 'GET', '/api/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found: GET /api/nope' });
  });
});
