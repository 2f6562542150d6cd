import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

describe('OpenAPI contract', () => {
  let portal: TestPortal;
  let doc: any;
  beforeAll(async () => {
    portal = await startTestPortal();
    doc = (await http(portal.url, 'GET', '/api/openapi.json')).body;
  });
  afterAll(() => portal.close());

  it('serves an OpenAPI 3.1 document generated from the route schemas', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.24.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer', 'identityToken']);
    expect(doc.components.securitySchemes.identityToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Identity-Token',
    });
    for (const path of [
      '/api/health',
      '/api/license',
      '/api/licenses',
      '/api/audit',
      '/identity/token',
      '/identity/user',
      '/identity/admin/users',
      '/identity/.well-known/jwks.json',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
  });

  it('gives every operation a success response schema and documents its errors in the common error shape', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.entries(ops).map(([method, op]) => ({ path, method, op: op as any })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(14);
    for (const { path, method, op } of operations) {
      const codes = Object.keys(op.responses ?? {});
      const success = codes.find((c) => c.startsWith('2'));
      expect(success, `${method} ${path} has no success response`).toBeDefined();
      expect(op.responses[success!].content?.['application/json']?.schema, `${method} ${path}`).toBeDefined();
      for (const code of codes.filter((c) => c.startsWith('4'))) {
        const schema = op.responses[code].content['application/json'].schema;
        expect(schema.required, `${method} ${path} ${code}`).toContain('error');
      }
    }
  });

  it('documents the 409 of an ambiguous session id with its client list and the share operations', () => {
    for (const [path, method] of [
      ['/api/download', 'get'],
      ['/api/benchmark', 'get'],
      ['/api/sessions', 'get'],
      ['/api/sessions', 'patch'],
      ['/api/sessions', 'delete'],
      ['/api/sessions/share', 'post'],
      ['/api/sessions/share', 'delete'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(op.responses['409'].content['application/json'].schema.required, `${method} ${path}`).toEqual([
        'error',
        'client_ids',
      ]);
      expect(
        op.parameters.map((p: { name: string }) => p.name),
        `${method} ${path}`,
      ).toContain('client_id');
    }
  });

  it('serves the browsable documentation page', async () => {
    const res = await http(portal.url, 'GET', '/api/docs/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('swagger');
  });
});
