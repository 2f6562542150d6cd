import { csvCell, neutraliseFormula, toCsv, toDefectDojo, toSarif } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';

/**
 * What the exports let through to the tools that open them: only http(s)
 * reference URLs reach SARIF's helpUri and help text, DefectDojo's references and the CSV, and
 * no CSV cell starts with a character a spreadsheet acts on.
 */

/** URLs a session file may carry that no export may hand on as a link. */
const HOSTILE = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' javascript:alert(1)',
  '\tjavascript:alert(1)',
  '\njavascript:alert(1)',
  '\u0001javascript:alert(1)',
  'java\tscript:alert(1)',
  'java\nscript:alert(1)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'DATA:text/html,<script>alert(1)</script>',
  '  data:text/html,x',
  'vbscript:msgbox(1)',
  'VBScript:msgbox(1)',
  'file:///etc/passwd',
  'ftp://files.example/x',
  'mailto:a@example.com',
  '//evil.example/x',
  '/relative/path',
  'not a url',
  'https://',
];

const KEPT = ['https://weakdh.org/', ' HTTPS://Example.ORG/Advisory?id=1', 'http://vendor.example/kb/42'];
const KEPT_AS = ['https://weakdh.org/', 'https://example.org/Advisory?id=1', 'http://vendor.example/kb/42'];

function session(urls: string[]) {
  return {
    metadata: { session_id: '20260301_120000', target: '10.0.0.0/24', finished_at: '2026-03-01T12:30:00Z' },
    findings: [
      {
        id: 'f-1',
        rule_id: 'weak-tls',
        title: 'Weak TLS',
        severity: 'high',
        host: '10.0.0.5',
        port: 443,
        protocol: 'tcp',
        remediation: 'Disable TLS 1.0.',
        references: { urls },
      },
    ],
  };
}

const TODAY = { today: '2026-03-02' };
const sarifRule = (urls: string[]) => JSON.parse(toSarif(session(urls), TODAY)).runs[0].tool.driver.rules[0];
const dojoFinding = (urls: string[]) => JSON.parse(toDefectDojo(session(urls), TODAY)).findings[0];
const csvReferences = (urls: string[]) => {
  const [header, row] = toCsv(session(urls), TODAY).split('\r\n');
  const at = header?.split(',').indexOf('references') ?? -1;
  // The row has no quoted commas before the references column in this session.
  return row?.split(',')[at];
};

describe('reference URLs in exports', () => {
  it('SARIF: no helpUri and a help text without the URL, for each hostile URL alone', () => {
    for (const url of HOSTILE) {
      const rule = sarifRule([url]);
      expect(rule.helpUri, JSON.stringify(url)).toBeUndefined();
      expect(rule.help, JSON.stringify(url)).toEqual({ text: 'Disable TLS 1.0.' });
    }
  });

  it('DefectDojo: no references for each hostile URL alone', () => {
    for (const url of HOSTILE) expect(dojoFinding([url]).references, JSON.stringify(url)).toBeUndefined();
  });

  it('CSV: an empty references cell for each hostile URL alone', () => {
    for (const url of HOSTILE) expect(csvReferences([url]), JSON.stringify(url)).toBe('');
  });

  it('keeps the http(s) URLs among them, normalised, in their order, in every format', () => {
    const urls = [HOSTILE[0] as string, ...KEPT, ...HOSTILE.slice(1)];
    const rule = sarifRule(urls);
    expect(rule.helpUri).toBe(KEPT_AS[0]);
    expect(rule.help).toEqual({ text: ['Disable TLS 1.0.', ...KEPT_AS].join('\n\n') });
    expect(dojoFinding(urls).references).toBe(KEPT_AS.join('\n'));
    expect(csvReferences(urls)).toBe(KEPT_AS.join('; '));
    const all = [toSarif(session(urls), TODAY), toDefectDojo(session(urls), TODAY), toCsv(session(urls), TODAY)];
    for (const text of all) expect(text.toLowerCase()).not.toMatch(/javascript|vbscript|data:|file:/);
  });
});

/** Every leading character a spreadsheet may act on, by name. */
const LEADS: [string, string][] = [
  ['equals', '='],
  ['plus', '+'],
  ['minus', '-'],
  ['at', '@'],
  ['pipe', '|'],
  ['tab', '\t'],
  ['carriage return', '\r'],
  ['line feed', '\n'],
  ['space', ' '],
  ['no-break space', '\u00a0'],
  ['byte-order mark', '\ufeff'],
  ['zero-width space', '\u200b'],
  ['zero-width joiner', '\u200d'],
  ['word joiner', '\u2060'],
  ['ideographic space', '\u3000'],
  ['line separator', '\u2028'],
  ['NUL', '\u0000'],
  ['vertical tab', '\u000b'],
  ['fullwidth equals', '\uff1d'],
  ['fullwidth plus', '\uff0b'],
  ['fullwidth minus', '\uff0d'],
  ['fullwidth at', '\uff20'],
  ['fullwidth pipe', '\uff5c'],
  ['small equals', '\ufe66'],
  ['small plus', '\ufe62'],
  ['small minus', '\ufe63'],
  ['small at', '\ufe6b'],
  ['minus sign', '\u2212'],
];

describe('CSV cells', () => {
  it('get a leading apostrophe when they start with any character a spreadsheet acts on', () => {
    for (const [name, lead] of LEADS) {
      expect(neutraliseFormula(`${lead}cmd|' /C calc'!A0`), name).toBe(`'${lead}cmd|' /C calc'!A0`);
      expect(neutraliseFormula(lead), name).toBe(`'${lead}`);
    }
  });

  it('are quoted after the apostrophe when they hold a quote, comma or line break', () => {
    expect(csvCell('\n=1+1')).toBe(`"'\n=1+1"`);
    expect(csvCell(' =HYPERLINK("http://x")')).toBe(`"' =HYPERLINK(""http://x"")"`);
    expect(csvCell('\uff1dSUM(A1,A2)')).toBe(`"'\uff1dSUM(A1,A2)"`);
  });

  it('are left alone otherwise', () => {
    for (const text of ['10.0.0.5', 'Weak TLS', 'CVE-2024-3400', "'quoted", 'a=b', 'a-b', '(1)', '#1', ''])
      expect(neutraliseFormula(text), text).toBe(text);
  });

  it('of every column go through it: a finding whose fields all start with a trigger', () => {
    const lead = (s: string) => `\u00a0=${s}`;
    const doc = {
      metadata: { session_id: '20260301_120000' },
      findings: [
        {
          id: lead('id'),
          rule_id: lead('rule'),
          title: lead('title'),
          host: lead('host'),
          hostname: lead('name'),
          protocol: lead('tcp'),
          service: lead('svc'),
          description: lead('desc'),
          remediation: lead('fix'),
          evidence: lead('ev'),
        },
      ],
    };
    const row = toCsv(doc, TODAY).split('\r\n')[1] ?? '';
    const cells = row.split(',').filter((c) => c.includes('='));
    expect(cells).toHaveLength(10);
    for (const cell of cells) expect(cell.startsWith("'\u00a0=")).toBe(true);
  });
});
