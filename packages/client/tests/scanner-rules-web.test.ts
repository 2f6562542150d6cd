import { describe, expect, it } from 'vitest';
import { http } from '../src/scanner/rules/http.ts';
import { brief, fixture, HAND, HARDENED, hostOf, REAL, run, WEAK } from './scanner-fixtures.ts';

describe('HTTP rules on real python http.server output (odd port 9876)', () => {
  it('finds plain HTTP, the missing headers (no HSTS on plain HTTP) and the directory listing from its title', () => {
    const found = run(http, REAL, '127.0.0.1');
    expect(found.map(brief)).toEqual([
      { rule_id: 'http-no-tls', severity: 'low', category: 'cleartext_protocol', port: 9876, service: 'http' },
      { rule_id: 'http-missing-csp', severity: 'low', category: 'misconfiguration', port: 9876, service: 'http' },
      {
        rule_id: 'http-missing-frame-options',
        severity: 'low',
        category: 'misconfiguration',
        port: 9876,
        service: 'http',
      },
      {
        rule_id: 'http-missing-content-type-options',
        severity: 'low',
        category: 'misconfiguration',
        port: 9876,
        service: 'http',
      },
      { rule_id: 'directory-listing', severity: 'medium', category: 'misconfiguration', port: 9876, service: 'http' },
    ]);
    expect(found[1]?.evidence).toBe(
      'tcp/9876 http (SimpleHTTPServer 0.6 Python 3.11.7) [probed, conf 10]; response headers seen: server, content-type',
    );
    expect(found[4]?.evidence).toBe('http-title: "Directory listing for /"');
  });
});

describe('HTTP rules on the hand-written lab', () => {
  it('on HTTPS wants HSTS, accepts X-Frame-Options, and rates a login page over TLS without plain-HTTP findings', () => {
    const found = run(http, HAND, WEAK).filter((f) => f.port === 9443);
    expect(found.map((f) => [f.rule_id, f.service])).toEqual([
      ['http-missing-hsts', 'https'],
      ['http-missing-csp', 'https'],
      ['http-missing-content-type-options', 'https'],
    ]);
  });

  it('quotes the file names http-ls listed', () => {
    const listing = run(http, HAND, WEAK).find((f) => f.rule_id === 'directory-listing');
    expect(listing).toMatchObject({
      port: 8081,
      severity: 'medium',
      evidence: 'http-ls: listing of /: backups/, config.bak',
    });
  });

  it('rates plain HTTP low, and medium when the page is a login page', () => {
    const parsed = fixture(REAL);
    const host = hostOf(parsed, '127.0.0.1');
    const scanTime = new Date('2026-11-25T00:00:00Z');
    expect(http.evaluate(host, { scanTime }).find((f) => f.rule_id === 'http-no-tls')?.severity).toBe('low');
    const web = host.ports.find((p) => p.portid === 9876);
    const title = web?.scripts.find((s) => s.id === 'http-title');
    if (title === undefined) throw new Error('fixture lost its http-title');
    title.children = [{ kind: 'elem', key: 'title', value: 'Admin Login' }];
    const login = http.evaluate(host, { scanTime }).find((f) => f.rule_id === 'http-no-tls');
    expect(login).toMatchObject({ severity: 'medium', title: 'Login page served over HTTP without TLS' });
  });

  it('finds nothing on the hardened host: HTTP redirects to HTTPS, which sends HSTS, CSP with frame-ancestors, nosniff', () => {
    expect(run(http, HAND, HARDENED)).toEqual([]);
  });
});
