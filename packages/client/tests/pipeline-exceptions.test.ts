import { describe, expect, it } from 'vitest';
import { applyExceptions, parseExceptionsFile } from '../src/pipeline/exceptions.ts';
import type { Remediation } from '../src/pipeline/types.ts';

const FP = 'a'.repeat(64);
const items: Remediation[] = [
  { title: 'Telnet enabled', severity: 'high', fingerprint: FP, host: '10.0.0.6', status: 'new' },
  { title: 'Self-signed certificate', severity: 'low', host: '10.0.0.7', status: 'persistent' },
  { title: 'Self-signed certificate', severity: 'low', host: '10.0.0.8', status: 'persistent' },
  { title: 'SMBv1 enabled', severity: 'critical', host: '10.0.0.9', status: 'new' },
];

const file = JSON.stringify({
  exceptions: [
    {
      fingerprint: FP,
      reason: 'Isolated lab VLAN',
      approver: 'CISO J. Doe',
      approved_at: '2025-01-10T09:00:00Z',
      expiry: '2025-02-28',
    },
    {
      title: 'Self-signed certificate',
      host: '10.0.0.7',
      reason: 'Internal only',
      approver: 'IT lead',
      approved_at: '2025-01-10T09:00:00Z',
      expiry: null,
    },
  ],
});

describe('exceptions file', () => {
  it('parses the documented format', () => {
    const { rules, warnings } = parseExceptionsFile(file);
    expect(warnings).toEqual([]);
    expect(rules).toEqual([
      {
        fingerprint: FP,
        title: null,
        host: null,
        reason: 'Isolated lab VLAN',
        approver: 'CISO J. Doe',
        approved_at: '2025-01-10T09:00:00Z',
        expiry: '2025-02-28',
      },
      {
        fingerprint: null,
        title: 'Self-signed certificate',
        host: '10.0.0.7',
        reason: 'Internal only',
        approver: 'IT lead',
        approved_at: '2025-01-10T09:00:00Z',
        expiry: null,
      },
    ]);
  });

  it('skips bad entries with one warning each, and a file that is not the format with one warning', () => {
    const bad = parseExceptionsFile(
      JSON.stringify({
        exceptions: [
          1,
          { title: 'x' },
          { fingerprint: 'XYZ', reason: 'r', approver: 'a' },
          { title: 't', reason: 'r', approver: 'a', expiry: '2025-13-45' },
          { reason: 'r', approver: 'a' },
        ],
      }),
    );
    expect(bad.rules).toEqual([]);
    expect(bad.warnings).toEqual([
      'exceptions file: entry 0 is not an object; skipped',
      'exceptions file: entry 1: reason and approver are required; skipped',
      'exceptions file: entry 2: fingerprint must be 64 lower-case hex characters; skipped',
      'exceptions file: entry 3: expiry must be a date YYYY-MM-DD or null; skipped',
      'exceptions file: entry 4: needs a fingerprint or a title; skipped',
    ]);
    expect(parseExceptionsFile('{nope').warnings[0]).toMatch(/^exceptions file: not valid JSON/);
    expect(parseExceptionsFile('[]')).toEqual({
      rules: [],
      warnings: ['exceptions file: expected an object with an "exceptions" array; no exceptions applied'],
    });
  });

  it('matches by fingerprint, or by title and host; the expiry day itself is still valid', () => {
    const out = applyExceptions(items, parseExceptionsFile(file).rules, '2025-02-28');
    expect(out[0]).toMatchObject({
      exception_status: 'accepted',
      exception_reason: 'Isolated lab VLAN',
      exception_approver: 'CISO J. Doe',
      exception_approved_at: '2025-01-10T09:00:00Z',
      exception_expiry: '2025-02-28',
      exception_expired: false,
    });
    expect(out[1]).toMatchObject({ exception_status: 'accepted', exception_expiry: null, exception_expired: false });
    expect(out[2]).toMatchObject({ exception_status: null, exception_reason: null, exception_expired: false });
    expect(out[3]).toMatchObject({ exception_status: null });
  });

  it('an exception past its expiry is expired', () => {
    const out = applyExceptions(items, parseExceptionsFile(file).rules, '2025-03-01');
    expect(out[0]).toMatchObject({
      exception_status: 'expired',
      exception_expired: true,
      exception_reason: 'Isolated lab VLAN',
      exception_expiry: '2025-02-28',
    });
    expect(out[1]).toMatchObject({ exception_status: 'accepted', exception_expired: false });
  });
});
