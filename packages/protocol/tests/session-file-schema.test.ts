import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { SessionFile, sessionFileJsonSchemaText } from '@svc/protocol';
import { DEFAULT_MIX, parseMix, stagedDocs } from '@svc/client/engine';

/**
 * The session file's schema (packages/protocol/src/session-file/schema.ts) and its published
 * JSON Schema (docs/session-file.schema.json): real files validate, the published file is
 * exactly what the schema generates.
 */

const REPO = path.resolve(import.meta.dirname, '../../..');
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(path.join(REPO, 'packages/portal/tests/fixtures', name), 'utf8'));
const errorsOf = (doc: unknown) => [...Value.Errors(SessionFile, doc)].map((e) => `${e.path}: ${e.message}`);

const synthetic = () =>
  [
    ...stagedDocs({
      target: '10.20.0.0/24',
      sessions: 3,
      findings: 30,
      mix: parseMix(DEFAULT_MIX),
      intervalMs: 86_400_000,
      trend: 'worsening',
      exceptions: 3,
      seed: 42,
      seeded: true,
      clientId: 'acme',
      now: new Date(),
    }),
  ].map((s) => s.doc);

describe('docs/session-file.schema.json', () => {
  it('is exactly what npm run schema:session-file generates (it never drifts from the TypeBox schema)', () => {
    expect(readFileSync(path.join(REPO, 'docs/session-file.schema.json'), 'utf8')).toBe(sessionFileJsonSchemaText());
  });

  it("the script's --check agrees (exit 0 on the committed file)", () => {
    const res = spawnSync(process.execPath, ['scripts/session-file-schema.ts', '--check'], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });
});

describe('the published JSON Schema with a standard validator (Ajv, draft-07)', () => {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(
    JSON.parse(readFileSync(path.join(REPO, 'docs/session-file.schema.json'), 'utf8')) as object,
  );

  it('accepts both fixtures and a synthetic collection', () => {
    for (const doc of [fixture('session-minimal.json'), fixture('session-complete.json'), ...synthetic()]) {
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('refuses a file without a session id and a finding of an unknown severity', () => {
    expect(validate({ metadata: { target: 'x' } })).toBe(false);
    expect(validate({ metadata: { session_id: 'a_1' }, findings: [{ severity: 'urgent' }] })).toBe(false);
    expect(validate({ session_id: 'a_1', future_block: { any: 'thing' } })).toBe(true);
  });
});

describe('SessionFile schema', () => {
  it('accepts both fixtures: an early v2.6-style file and a v4.2-style file with every block', () => {
    expect(errorsOf(fixture('session-minimal.json'))).toStrictEqual([]);
    expect(errorsOf(fixture('session-complete.json'))).toStrictEqual([]);
  });

  it('accepts every session of a synthetic collection', () => {
    const docs = synthetic();
    expect(docs).toHaveLength(3);
    for (const doc of docs) expect(errorsOf(doc)).toStrictEqual([]);
  });

  it('accepts a very old file with a top-level session id, and unknown fields anywhere (newer scanners)', () => {
    expect(errorsOf({ session_id: '20200101_000000', target: '10.0.0.1' })).toStrictEqual([]);
    expect(
      errorsOf({
        metadata: { session_id: 'a_1', future: { x: 1 } },
        summary: { new_score: 3 },
        findings: [{ exploit_maturity: 'high' }],
        brand_new_block: [],
      }),
    ).toStrictEqual([]);
  });

  it('requires a valid session id', () => {
    expect(Value.Check(SessionFile, {})).toBe(false);
    expect(Value.Check(SessionFile, { metadata: { target: 'x' } })).toBe(false);
    expect(Value.Check(SessionFile, { metadata: { session_id: '../x' } })).toBe(false);
    expect(Value.Check(SessionFile, { metadata: { session_id: 'a'.repeat(129) } })).toBe(false);
    expect(Value.Check(SessionFile, [])).toBe(false);
  });

  it('refuses fields of the wrong kind: a severity outside the five, a bad status, a port out of range, a bad fingerprint', () => {
    const ok = { metadata: { session_id: 'a_1' } };
    expect(Value.Check(SessionFile, { ...ok, findings: [{ severity: 'urgent' }] })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, remediation: [{ status: 'done' }] })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, remediation: [{ exception_expiry: '31/12/2025' }] })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, findings: [{ port: 70000 }] })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, findings: [{ fingerprint: 'abc' }] })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, summary: { risk_grade: 'E+' } })).toBe(false);
    expect(Value.Check(SessionFile, { ...ok, metadata: { session_id: 'a_1', license: { tier: 'gold' } } })).toBe(false);
  });

  it('accepts the full finding model', () => {
    const finding = {
      id: 'f-001',
      fingerprint: 'a'.repeat(64),
      rule_id: 'svc.tls.v1_0',
      title: 'TLS 1.0 supported',
      severity: 'medium',
      host: '10.0.0.5',
      hostname: 'web01',
      port: 443,
      protocol: 'tcp',
      service: 'https',
      evidence: 'ServerHello version 0x0301',
      description: 'The service negotiates TLS 1.0.',
      remediation: 'Allow TLS 1.2 and later only.',
      references: { cve: ['CVE-2011-3389'], cwe: ['CWE-327'], urls: ['https://example.org/advisory'] },
      cvss: 5.9,
    };
    expect(errorsOf({ metadata: { session_id: 'a_1' }, findings: [finding] })).toStrictEqual([]);
    expect(
      Value.Check(SessionFile, {
        metadata: { session_id: 'a_1' },
        findings: [{ ...finding, references: { cwe: ['327'] } }],
      }),
    ).toBe(false);
  });
});
