import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRegisteredSchemas } from '../src/http/compile-lazily.ts';
import { validatorCompiler } from '../src/http/validation.ts';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

describe('route schemas, compiled on first use', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal();
  });
  afterAll(async () => {
    await portal?.close();
  });

  it("every route's validators and serializers compile", () => {
    expect(() => compileRegisteredSchemas()).not.toThrow();
    expect(compileRegisteredSchemas()).toBe(0);
  });

  it('a schema that cannot compile fails the compilation of every registered schema', () => {
    const validate = validatorCompiler({
      schema: { type: 'no-such-type' },
      method: 'POST',
      url: '/x',
      httpPart: 'body',
    });
    expect(() => compileRegisteredSchemas()).toThrow(/type must be/);
    expect(() => validate({})).toThrow(/type must be/);
    expect(compileRegisteredSchemas()).toBe(0);
  });

  it('a validator keeps the errors of the value it last checked, for Fastify to read', async () => {
    const res = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(await portal.adminToken()),
      json: { tier: 'no-such-tier', client_id: 'schemas-co', name: 'n' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/tier/);
  });
});
