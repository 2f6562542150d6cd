import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '@svc/test-support/http';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * /api/openapi.json passes Redocly's recommended rules (plus redocly.yaml)
 * with no problem, through the script `npm run lint:openapi` runs, so the test command runs
 * the linter. The operation names, declared security and 4xx answers are checked here too.
 */

const SCRIPT = fileURLToPath(new URL('../../../scripts/lint-openapi.ts', import.meta.url));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runScript(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env, timeout: 150_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('OpenAPI lint', () => {
  let portal: TestPortal;
  let doc: any;
  let operations: { label: string; path: string; method: string; op: any }[];
  beforeAll(async () => {
    portal = await startTestPortal();
    doc = (await http(portal.url, 'GET', '/api/openapi.json')).body;
    operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, path, method, op })),
    );
  });
  afterAll(() => portal.close());

  it('npm run lint:openapi exits 0 and Redocly reports no error and no warning', async () => {
    const env = { ...process.env, DATABASE_URL: await createTestDatabase() };
    const run = await runScript(['--format', 'json'], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });

  it('gives every operation a unique camelCase operationId named for what it does', () => {
    expect(operations.length).toBeGreaterThanOrEqual(43);
    const ids = operations.map(({ label, op }) => {
      expect(op.operationId, label).toMatch(/^[a-z]+(?:[A-Z][a-z]*)+$/);
      return op.operationId as string;
    });
    expect(new Set(ids).size).toBe(ids.length);
    for (const [path, method, id] of [
      ['/api/licenses', 'post', 'createLicense'],
      ['/api/licenses', 'get', 'listLicenses'],
      ['/api/upload', 'post', 'uploadSession'],
      ['/api/health', 'post', 'sendHeartbeat'],
      ['/api/agent-commands', 'post', 'queueAgentCommand'],
      ['/api/agent-commands', 'get', 'pollAgentCommands'],
    ] as const) {
      expect(doc.paths[path][method].operationId, `${method} ${path}`).toBe(id);
    }
  });

  it('declares the security of every operation, public ones explicitly', () => {
    const schemes = Object.keys(doc.components.securitySchemes);
    for (const { label, op } of operations) {
      expect(Array.isArray(op.security), label).toBe(true);
      for (const requirement of op.security)
        expect(schemes, label).toEqual(expect.arrayContaining(Object.keys(requirement)));
    }
    const security = (path: string) => doc.paths[path].get?.security ?? doc.paths[path].post.security;
    for (const path of [
      '/readyz',
      '/identity/token',
      '/identity/.well-known/jwks.json',
      '/identity/.well-known/openid-configuration',
    ]) {
      expect(security(path), path).toEqual([]);
    }
    // Liveness is public; the fleet view (?agents=true) takes an admin JWT.
    expect(security('/api/health')).toEqual([{}, { identityToken: [] }]);
    expect(doc.info.license).toEqual({ name: 'Proprietary' });
  });

  it('declares a 4xx answer for every operation; the public probes give the 400 they declare', async () => {
    for (const { label, op } of operations) {
      expect(Object.keys(op.responses).filter((code) => code.startsWith('4')).length, label).toBeGreaterThan(0);
    }
    for (const path of ['/readyz', '/identity/.well-known/jwks.json', '/identity/.well-known/openid-configuration']) {
      expect(doc.paths[path].get.responses['400'].content['application/json'].schema.required, path).toEqual(['error']);
      const res = await http(portal.url, 'GET', `${path}?probe=%00`);
      expect(res.status, path).toBe(400);
      expect(res.body, path).toEqual({ error: 'Invalid query: field contains a NUL character (at probe)' });
    }
  });
});
