import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { normalizeFindings } from '../src/pipeline/findings.ts';

describe('normalizeFindings', () => {
  it('gives ids in input order and fingerprints when rule_id and host are known', () => {
    expect(
      normalizeFindings([
        { rule_id: 'telnet-open', host: '10.0.0.6', port: 23, protocol: 'tcp' },
        { title: 'no rule', ip: '10.0.0.7' },
      ]),
    ).toEqual([
      {
        id: 'f-001',
        rule_id: 'telnet-open',
        host: '10.0.0.6',
        port: 23,
        protocol: 'tcp',
        fingerprint: findingFingerprint({ rule_id: 'telnet-open', host: '10.0.0.6', port: 23, protocol: 'tcp' }),
      },
      { id: 'f-002', title: 'no rule', ip: '10.0.0.7' },
    ]);
  });

  it('keeps given ids and never hands out an id already taken (ids must be unique for compliance rows)', () => {
    expect(
      normalizeFindings([{ title: 'a' }, { id: 'f-001', title: 'b' }, { title: 'c' }, { id: 'f-001', title: 'd' }]).map(
        (f) => f.id,
      ),
    ).toEqual(['f-002', 'f-001', 'f-003', 'f-004']);
  });
});
