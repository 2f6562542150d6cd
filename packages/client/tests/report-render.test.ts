import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { runStages } from '../src/pipeline/run-stages.ts';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { BRANDING_DEFAULTS, MAX_LOGO_BYTES } from '../src/report/branding.ts';
import { escapeHtml, html, trusted } from '../src/report/html.ts';
import {
  type Branding,
  brandingFromEnv,
  renderExecSummary,
  renderReport,
  type ReportInput,
  type TrendPoint,
} from '../src/report/index.ts';
import { REPORT_SCRIPT_SOURCE } from '../src/report/sections/script.ts';
import { topRisks } from '../src/report/top-risks.ts';
import { trendChart } from '../src/report/trend-chart.ts';
import {
  BUSINESS_LICENSE,
  HOSTILE_EVIDENCE,
  HOSTILE_TITLE,
  reportSession,
  SESSION_ID,
} from '@svc/test-support/report-session';

const noFile = (file: string): Uint8Array => {
  throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
};
const defaults = (): Branding => brandingFromEnv({}, noFile, () => {});
const input = (over: Partial<ReportInput> = {}): ReportInput => ({ ...reportSession(), branding: defaults(), ...over });
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;
/** The report's <style> element. */
const styleOf = (page: string) => page.slice(page.indexOf('<style>'), page.indexOf('</style>'));
/** One section's markup, up to the next section. */
const sectionOf = (page: string, id: string): string => {
  const start = page.indexOf(`<section id="${id}"`);
  if (start < 0) return '';
  return page.slice(start, page.indexOf('</section>', start));
};

describe('html tagged template', () => {
  it('escapes every interpolated value, renders arrays, and leaves Html as it is', () => {
    const out = html`<p title="${`"><x a='1'>`}">${'<b>&</b>'}${[1, ' ', null, undefined, false, html`<i>${'<'}</i>`]}${trusted('<hr>')}</p>`;
    expect(out.value).toBe(
      '<p title="&quot;&gt;&lt;x a=&#39;1&#39;&gt;">&lt;b&gt;&amp;&lt;/b&gt;1 <i>&lt;</i><hr></p>',
    );
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
  });
});

describe('brandingFromEnv', () => {
  it('uses the defaults when nothing is set', () => {
    const warnings: string[] = [];
    expect(brandingFromEnv({}, noFile, (m) => warnings.push(m))).toEqual({
      primaryColor: '#dc3545',
      headerBg: '#1a1a2e',
      headerText: '#ffffff',
      subtitle: BRANDING_DEFAULTS.subtitle,
      footerText: BRANDING_DEFAULTS.footerText,
      footerEmail: null,
      footerUrl: null,
      logo: null,
    });
    expect(warnings).toEqual([]);
    const page = renderReport(input());
    expect(styleOf(page)).toContain(':root{--primary-color:#dc3545;--header-bg:#1a1a2e;--header-text:#ffffff}');
  });

  it('takes every variable of the table, and embeds COMPANY_LOGO as a data URL', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-logo-'));
    const logo = path.join(dir, 'logo.png');
    const bytes = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    fs.writeFileSync(logo, bytes);
    try {
      const warnings: string[] = [];
      const branding = brandingFromEnv(
        {
          REPORT_PRIMARY_COLOR: '#0d6efd',
          REPORT_HEADER_BG: 'rgb(0, 64, 128)',
          REPORT_HEADER_TEXT: 'white',
          REPORT_SUBTITLE: 'Blue Team <Consulting>',
          REPORT_FOOTER_TEXT: 'Prepared by Blue Team & Co.',
          REPORT_FOOTER_EMAIL: 'security@blue.example',
          REPORT_FOOTER_URL: 'https://blue.example/contact',
          COMPANY_LOGO: logo,
        },
        (f) => fs.readFileSync(f),
        (m) => warnings.push(m),
      );
      expect(warnings).toEqual([]);
      expect(branding).toEqual({
        primaryColor: '#0d6efd',
        headerBg: 'rgb(0, 64, 128)',
        headerText: 'white',
        subtitle: 'Blue Team <Consulting>',
        footerText: 'Prepared by Blue Team & Co.',
        footerEmail: 'security@blue.example',
        footerUrl: 'https://blue.example/contact',
        logo: { mime: 'image/png', base64: bytes.toString('base64') },
      });
      for (const page of [renderReport(input({ branding })), renderExecSummary(input({ branding }))]) {
        expect(styleOf(page)).toContain(
          ':root{--primary-color:#0d6efd;--header-bg:rgb(0, 64, 128);--header-text:white}',
        );
        expect(page).toContain(
          `<img class="logo" alt="Company logo" src="data:image/png;base64,${bytes.toString('base64')}">`,
        );
        expect(page).toContain('<p class="subtitle">Blue Team &lt;Consulting&gt;</p>');
        expect(page).toContain('<p>Prepared by Blue Team &amp; Co.</p>');
        expect(page).toContain('<a href="mailto:security@blue.example">security@blue.example</a>');
        expect(page).toContain('<a href="https://blue.example/contact" rel="noopener noreferrer" target="_blank">');
        expect(page).toContain('data-contact="mailto:security@blue.example"');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses colors that could inject CSS, and falls back to the default with a warning', () => {
    const warnings: string[] = [];
    const hostile = {
      REPORT_PRIMARY_COLOR: 'red;}body{display:none}',
      REPORT_HEADER_BG: 'url(https://evil.example/x.png)',
      REPORT_HEADER_TEXT: '#fff</style><script>alert(1)</script>',
    };
    const branding = brandingFromEnv(hostile, noFile, (m) => warnings.push(m));
    expect([branding.primaryColor, branding.headerBg, branding.headerText]).toEqual(['#dc3545', '#1a1a2e', '#ffffff']);
    expect(warnings).toEqual([
      'REPORT_PRIMARY_COLOR is not a CSS color ("red;}body{display:none}"): using #dc3545',
      'REPORT_HEADER_BG is not a CSS color ("url(https://evil.example/x.png)"): using #1a1a2e',
      'REPORT_HEADER_TEXT is not a CSS color ("#fff</style><script>alert(1)</script>"): using #ffffff',
    ]);
    // A Branding built by hand (not through brandingFromEnv) is checked again when rendered.
    const page = renderReport(
      input({ branding: { ...defaults(), ...{ primaryColor: hostile.REPORT_PRIMARY_COLOR } } }),
    );
    expect(styleOf(page)).toContain('--primary-color:#dc3545;');
    expect(page).not.toContain('body{display:none}');
    expect(count(page, '<script>')).toBe(1);
  });

  it('leaves out a footer URL or e-mail that is not one', () => {
    const warnings: string[] = [];
    const branding = brandingFromEnv(
      { REPORT_FOOTER_URL: 'javascript:alert(1)', REPORT_FOOTER_EMAIL: 'a@b.c"><script>' },
      noFile,
      (m) => warnings.push(m),
    );
    expect([branding.footerUrl, branding.footerEmail]).toEqual([null, null]);
    expect(warnings).toEqual([
      'REPORT_FOOTER_EMAIL is not an e-mail address ("a@b.c\\"><script>"): left out of the report',
      'REPORT_FOOTER_URL is not an http(s) URL ("javascript:alert(1)"): left out of the report',
    ]);
  });

  it('warns and goes without a logo that is missing, unreadable, of an unknown type or too big', () => {
    const warnings: string[] = [];
    const w = (m: string) => warnings.push(m);
    expect(brandingFromEnv({ COMPANY_LOGO: '/nonexistent/logo.png' }, noFile, w).logo).toBeNull();
    expect(brandingFromEnv({ COMPANY_LOGO: '/etc/passwd' }, () => Buffer.from('root'), w).logo).toBeNull();
    expect(brandingFromEnv({ COMPANY_LOGO: '/big.svg' }, () => Buffer.alloc(MAX_LOGO_BYTES + 1), w).logo).toBeNull();
    expect(warnings).toEqual([
      "COMPANY_LOGO /nonexistent/logo.png could not be read (ENOENT: no such file or directory, open '/nonexistent/logo.png'); the report has no logo",
      'COMPANY_LOGO /etc/passwd: not a PNG, JPEG, GIF, WebP or SVG file; the report has no logo',
      `COMPANY_LOGO /big.svg is ${MAX_LOGO_BYTES + 1} bytes (1 to ${MAX_LOGO_BYTES}); the report has no logo`,
    ]);
    expect(brandingFromEnv({ COMPANY_LOGO: '/l.SVG' }, () => Buffer.from('<svg/>'), w).logo).toEqual({
      mime: 'image/svg+xml',
      base64: Buffer.from('<svg/>').toString('base64'),
    });
  });
});

describe('renderReport and renderExecSummary', () => {
  const pages = () => {
    const i = input();
    return { report: renderReport(i), exec: renderExecSummary(i) };
  };

  it('keep the consultation block, one closing body tag in a script string, and the real one last', () => {
    for (const page of Object.values(pages())) {
      expect(count(page, 'id="consultation-section"')).toBe(1);
      expect(count(page, 'class="consultation-section"')).toBe(1);
      expect(count(page, 'id="scheduleBtn"')).toBe(1);
      const consult = sectionOf(page, 'consultation-section');
      expect(consult.startsWith('<section id="consultation-section" class="consultation-section">')).toBe(true);
      expect(consult).toContain('<button id="scheduleBtn" type="button"');
      // Two closing body tags: the first inside the script's string, the last the document's.
      expect(count(page, '</body>')).toBe(2);
      const script = page.slice(page.indexOf('<script>'), page.indexOf('</script>') + '</script>'.length);
      expect(script).toBe(`<script>${REPORT_SCRIPT_SOURCE}</script>`);
      expect(REPORT_SCRIPT_SOURCE).toContain(`'</body></html>'`);
      expect(page.indexOf('</body>')).toBeGreaterThan(page.indexOf('<script>'));
      expect(page.indexOf('</body>')).toBeLessThan(page.indexOf('</script>'));
      expect(page.endsWith('</script></body>\n</html>\n')).toBe(true);
      // Nothing external: no src/href to another origin, no @import or url() in the CSS.
      expect(page).not.toMatch(/\ssrc="(?!data:)/);
      expect(page).not.toMatch(/<link\b/);
      expect(styleOf(page)).not.toMatch(/@import|url\(/);
    }
  });

  it('escape everything from the scan: hostile evidence, titles and host names show as text', () => {
    const { report, exec } = pages();
    expect(report).toContain(
      '<pre class="evidence">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</pre>',
    );
    expect(report).not.toContain(HOSTILE_EVIDENCE);
    expect(report).not.toContain(HOSTILE_TITLE);
    expect(exec).not.toContain(HOSTILE_TITLE);
    const escapedTitle = 'Banner &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;';
    // Top risks, findings, per-host table and remediation table of the report; top 5 of the summary.
    expect(count(report, escapedTitle)).toBe(4);
    expect(count(exec, escapedTitle)).toBe(1);
    expect(report).toContain('10.1.0.9 <span class="muted">(web&lt;9&gt;)</span>');
    expect(report).toContain('OPS-7 &lt;replace PLC&gt;');
    for (const page of [report, exec]) {
      expect(count(page, '<script')).toBe(1);
      expect(count(page, '<img')).toBe(0);
      expect(page).not.toMatch(/<b>/);
    }
  });

  it('escape a hostile target and client in the title, header and chart', () => {
    const { doc, trend } = reportSession();
    const hostile = {
      ...doc,
      metadata: { ...doc.metadata, session_id: SESSION_ID, target: '</title><script>x()</script>', client: '<i>c</i>' },
    };
    for (const page of [
      renderReport(input({ doc: hostile, trend })),
      renderExecSummary(input({ doc: hostile, trend })),
    ]) {
      expect(count(page, '<script')).toBe(1);
      expect(page).toContain('&lt;/title&gt;&lt;script&gt;x()&lt;/script&gt;');
      expect(page).toContain('&lt;i&gt;c&lt;/i&gt;');
    }
  });

  it('show actual and operational risk with the exception impact, and the severity breakdown', () => {
    const { report } = pages();
    const risk = sectionOf(report, 'risk');
    expect(risk).toContain('<div class="value">79 <span class="grade grade-D">D</span></div>');
    expect(risk).toContain('<div class="value">74 <span class="grade grade-D">D</span></div>');
    expect(risk).toContain('Risk exceptions cover 1 finding and take 5 points off the score.');
    const cells = [...risk.matchAll(/<tr data-severity="(\w+)"><td>.*?<\/td><td class="num">(\d+)<\/td>/g)].map((m) => [
      m[1],
      Number(m[2]),
    ]);
    expect(cells).toEqual([
      ['critical', 2],
      ['high', 1],
      ['medium', 3],
      ['low', 1],
      ['info', 1],
    ]);
  });

  it('state the score formula next to the score: in full in the report, in one sentence in the executive summary', () => {
    const { report, exec } = pages();
    const risk = sectionOf(report, 'risk');
    const formula = risk.slice(risk.indexOf('<p id="score-formula"'));
    expect(formula).toContain(
      'The worst open finding sets the lowest possible score: critical 60 (grade D at best), high or medium 40 (grade C at best), low or info 0.',
    );
    expect(formula).toContain(
      'Every open finding then moves the score towards 100: score = 100 − (100 − lowest) × e<sup>−w/50</sup>, w the sum of weights critical 10, high 5, medium 2, low 0.5, info 0.',
    );
    expect(formula).toContain('Grades: A under 20, B under 40, C under 60, D under 80, F from 80.');
    expect(formula).toContain('The operational score leaves out findings under an accepted, unexpired exception.');
    expect(risk.indexOf('id="score-formula"')).toBeGreaterThan(risk.indexOf('id="score-actual"'));
    // The one-page summary: the same rule, shorter.
    const short = sectionOf(exec, 'risk');
    expect(short).toContain(
      '<p id="score-formula" class="muted">The worst open finding sets the lowest possible score (critical 60, high or medium 40, low or info 0); every open finding moves it towards 100. Grades: A under 20, B under 40, C under 60, D under 80, F from 80.</p>',
    );
    expect(short.indexOf('id="score-formula"')).toBeGreaterThan(short.indexOf('id="score-actual"'));
  });

  it('one open critical: grade D next to "Highest severity found: Critical", no note on the scoring', () => {
    const { doc } = runStages({
      findings: [
        { rule_id: 'default-credentials', title: 'Default admin password', severity: 'critical', host: '10.0.0.6' },
      ],
      hosts: [{ ip: '10.0.0.6' }],
      prior: null,
      exceptions: [],
      settings: {
        sessionId: SESSION_ID,
        target: '10.0.0.6',
        toolVersion: '4.2.3',
        scanProfile: 'standard',
        startedAt: new Date('2025-03-01T14:00:00.000Z'),
        schedule: null,
        orc: orcSettingsFrom({}),
      },
      license: { tier: 'business', state: BUSINESS_LICENSE },
      now: new Date('2025-03-01T14:10:00.000Z'),
    });
    const exec = renderExecSummary(input({ doc, trend: [] }));
    const risk = sectionOf(exec, 'risk');
    expect(risk).toContain('Highest severity found: <strong>Critical</strong>');
    expect(risk).toContain('<div class="value">67 <span class="grade grade-D">D</span></div>');
    expect(risk).not.toContain('id="score-rescored"');
  });

  it('a session scored before the worst finding bounded the score keeps its stored score, with a note of the current one', () => {
    // As the scanner wrote it before: one critical scored 18, grade A.
    const doc = {
      metadata: { session_id: '20250101_000000', target: '10.0.0.0/24' },
      summary: {
        risk_score: 18,
        risk_grade: 'A',
        severity_counts: { critical: 1, high: 0, medium: 0, low: 0, info: 0 },
        total_findings: 1,
      },
      findings: [{ id: 'f-001', title: 'Default admin password', severity: 'critical', host: '10.0.0.6' }],
    } as SessionFile;
    for (const page of [renderReport(input({ doc, trend: [] })), renderExecSummary(input({ doc, trend: [] }))]) {
      const risk = sectionOf(page, 'risk');
      expect(risk).toContain('<div class="value">18 <span class="grade grade-A">A</span></div>');
      expect(risk).toContain(
        '<p id="score-rescored">This session was scored before the worst open finding bounded the score. By the current formula it scores 67, grade D.</p>',
      );
    }
    // A stored grade within the cap of the worst finding gets no note.
    const fine = { ...doc, summary: { ...doc.summary, risk_score: 67, risk_grade: 'D' } } as SessionFile;
    expect(renderReport(input({ doc: fine, trend: [] }))).not.toContain('id="score-rescored"');
  });

  it('rank top risks by severity weight times hosts, with the weak TLS findings merged into one', () => {
    const { doc } = reportSession();
    const risks = topRisks(doc.findings ?? [], 10);
    expect(risks.map((r) => [r.title, r.severity, r.hosts, r.rank])).toEqual([
      ['Default admin password', 'critical', ['10.0.0.6'], 10],
      ['OpenSSH 8.9 vulnerable to regreSSHion (CVE-2024-6387)', 'critical', ['10.0.0.5'], 10],
      ['Telnet enabled', 'high', ['10.0.0.6'], 5],
      ['Weak TLS/SSL configuration', 'medium', ['10.0.0.5', '10.0.0.7'], 4],
      [HOSTILE_TITLE, 'low', ['10.1.0.9'], 0.5],
    ]);
    expect(risks[3]?.titles).toEqual([
      'SWEET32: 64-bit block cipher (3DES) supported',
      'TLS 1.0 enabled',
      'TLS RC4 cipher suites supported',
    ]);
    expect(risks[3]?.findingCount).toBe(3);
    const exec = renderExecSummary(input());
    expect(count(sectionOf(exec, 'top-risks'), '<tr><td>')).toBe(5);
  });

  it('show findings with evidence, advice and references, and one table per host', () => {
    const { report } = pages();
    const findings = sectionOf(report, 'findings');
    expect(findings).toContain('<strong>Remediation:</strong> Upgrade OpenSSH to 9.8p1 or later');
    expect(findings).toContain('CVE-2024-6387, CWE-364, <a href="https://www.openssh.com/txt/release-9.8"');
    expect(findings).toContain('<pre class="evidence">SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.1</pre>');
    expect(count(findings, '<article class="finding"')).toBe(8);
    const hosts = sectionOf(report, 'hosts');
    expect([...hosts.matchAll(/<div class="host"><h3>([^<\s]+)/g)].map((m) => m[1])).toEqual([
      '10.0.0.6',
      '10.0.0.5',
      '10.0.0.7',
      '10.1.0.9',
    ]);
  });

  it('show remediation (new, persistent, status, first seen) and resolved items', () => {
    const { report, exec } = pages();
    expect(sectionOf(exec, 'trend')).toContain(
      '<p id="delta">7 new since the prior scan, 1 persistent, 1 resolved.</p>',
    );
    const r = sectionOf(report, 'remediation');
    expect(r).toContain('7 new since the prior scan, 1 persistent, 1 resolved.');
    // Counts per status: open items and the resolved ones of remediation_resolved[].
    expect(r).toContain(
      '<tbody><tr><td class="num">7</td><td class="num">0</td><td class="num">1</td><td class="num">1</td><td class="num">0</td></tr></tbody>',
    );
    expect(r).toContain(
      '<tr><td>Telnet enabled</td><td>10.0.0.6</td><td><span class="sev sev-high">High</span></td><td>Persistent</td><td>in_progress</td><td>20250215_140000</td><td>in_progress</td><td>OPS-7 &lt;replace PLC&gt;</td></tr>',
    );
    expect(r).toContain(`<td>New</td><td>new</td><td>${SESSION_ID}</td>`);
    expect(r).toContain('<tr><td>RDP exposed</td><td>10.0.0.8</td>');
  });

  it('show what the scan did not check and the false positives, counted apart from accepted risk', () => {
    const { doc, trend } = reportSession();
    const marked: SessionFile = {
      ...doc,
      remediation: (doc.remediation ?? []).map((e) =>
        e.title === 'Web page title' || e.title === 'TLS 1.0 enabled'
          ? {
              ...e,
              disposition: 'false_positive' as const,
              disposition_reason: 'backported fix <deb12u3>',
              disposition_by: 'analyst',
              disposition_at: '2025-02-25T10:00:00.000Z',
            }
          : e,
      ),
      remediation_not_checked: [
        {
          title: 'Redis without a password',
          severity: 'high',
          host: '10.0.3.4',
          port: 6379,
          protocol: 'tcp',
          status: 'in_progress',
          note: 'OPS-31',
          first_seen: '20250215_140000',
          last_seen: '20250222_140000',
        } as NonNullable<SessionFile['remediation_not_checked']>[number],
      ],
    };
    const i = { doc: marked, trend, branding: defaults() };
    const report = renderReport(i);
    const exec = renderExecSummary(i);
    const r = sectionOf(report, 'remediation');
    expect(r).toContain(', 1 not checked by this scan.');
    expect(r).toContain('<h3 id="not-checked">Not checked by this scan</h3>');
    expect(r).toContain(
      '1 open finding of earlier scans was not checked: this scan did not look where it is (the host did not answer, or the port was not scanned).',
    );
    expect(r).toContain(
      '<tr><td>Redis without a password</td><td>10.0.3.4</td><td>6379/tcp</td><td><span class="sev sev-high">High</span></td><td>in_progress</td><td>20250222_140000</td><td>OPS-31</td></tr>',
    );
    expect(r).toContain('<h3 id="false-positives">False positives</h3>');
    expect(r).toContain(
      'are marked as false positives: left out of both risk scores and counted apart from accepted risk.',
    );
    expect(r).toContain('<td>backported fix &lt;deb12u3&gt;</td><td>analyst</td><td>2025-02-25 10:00 UTC</td>');
    expect(r).toContain('(false positive)</td>');
    const fps = (marked.remediation ?? []).filter((e) => e.disposition === 'false_positive').length;
    expect(r).toContain(`${fps} findings are marked`);
    expect(exec).toContain(
      `<span id="triage-apart">Counted apart: ${fps} false positives (out of both scores); 1 open finding of earlier scans not checked by this scan; 1 finding of accepted risk (still in the actual score).</span>`,
    );
    // Without false positives or findings not checked, nothing is added: the scores state accepted risk.
    expect(renderExecSummary(input())).not.toContain('triage-apart');
    expect(sectionOf(exec, 'trend')).toContain(', 1 not checked by this scan.</p>');
  });

  it('show accepted and expired exceptions with reason, approver and expiry', () => {
    const { report, exec } = pages();
    const e = sectionOf(report, 'exceptions');
    expect(e).toContain('1 accepted, 1 expired.');
    expect(e).toContain(
      '<tr class="exception-expired"><td>Telnet enabled</td><td>10.0.0.6</td><td><span class="expired">Expired: counts in the score again</span></td><td>Old PLC &lt;needs telnet&gt;</td><td>Plant manager</td><td>-</td><td>2025-02-28</td></tr>',
    );
    expect(e).toContain(
      '<tr class="exception-accepted"><td>Default admin password</td><td>10.0.0.6</td><td>Accepted</td><td>Kiosk, replaced in April</td><td>CISO</td><td>2025-02-01 09:00 UTC</td><td>2025-04-30</td></tr>',
    );
    expect(exec).toContain('Renew or close 1 expired risk exception: they count in the score again.');
  });

  it('show compliance gaps per framework, and topology', () => {
    const { report } = pages();
    const c = sectionOf(report, 'compliance');
    for (const fw of ['CIS Controls v8', 'NIST CSF', 'PCI-DSS v4.0', 'SOC 2', 'ORC 9.64'])
      expect(c).toContain(`<tr><td>${fw}</td>`);
    expect(c).toMatch(/<tr><td>CIS Controls v8<\/td><td class="num">\d+<\/td><td class="num">153<\/td>/);
    expect(c).toMatch(/<tr><td>NIST CSF<\/td><td class="num">\d+<\/td><td class="num">106<\/td>/);
    expect(c).toMatch(/<tr><td>SOC 2<\/td><td class="num">\d+<\/td><td class="num">33<\/td>/);
    const t = sectionOf(report, 'topology');
    expect(t).toContain('<tr><td>10.0.0.0/24</td><td class="num">3</td>');
    expect(t).toContain('<tr><td>10.1.0.0/24</td><td class="num">1</td>');
  });

  it('show ORC 9.64 readiness only when the session has the block', () => {
    const withOrc = renderReport(input());
    const orc = sectionOf(withOrc, 'orc-964');
    expect(orc).toContain('Compliance deadline: <strong>2026-07-01</strong>');
    expect(count(orc, '<td>9.64(C)(')).toBe(6); // five divisions and the training attestation
    expect(orc).toContain('<td>9.64(C)(6)</td>');
    expect(orc).toMatch(/<td>9\.64\(C\)\(6\)<\/td><td>[^<]*<\/td><td>Attested<\/td>/);
    const { doc, trend } = reportSession(false);
    expect(doc.orc_964).toBeUndefined();
    const without = renderReport(input({ doc, trend }));
    expect(without).not.toContain('id="orc-964"');
    expect(without).not.toContain('9.64(C)');
    expect(renderExecSummary(input({ doc, trend }))).not.toContain('ORC 9.64');
  });

  it('render an old, nearly empty session file', () => {
    const doc = { session_id: '20200101_000000' } as SessionFile;
    for (const page of [renderReport(input({ doc, trend: [] })), renderExecSummary(input({ doc, trend: [] }))]) {
      expect(page).toContain('unnamed target');
      expect(page).toContain('id="scheduleBtn"');
      expect(page).toContain('No sessions yet');
    }
  });

  it('stay a reasonable size for 10,000 findings on 1,000 hosts', () => {
    const rules = [
      'telnet-open',
      'tls-weak-cipher',
      'outdated-software',
      'default-credentials',
      'http-banner',
      'rdp-exposed',
      'smbv1-enabled',
    ];
    const severities = ['critical', 'high', 'medium', 'low', 'info'] as const;
    const findings: ScanFinding[] = Array.from({ length: 10_000 }, (_, i) => ({
      rule_id: rules[i % 7] as string,
      title: `Weakness ${i % 50}`,
      severity: severities[i % 5] ?? 'info',
      host: `10.0.${Math.floor(i / 2500)}.${(Math.floor(i / 10) % 250) + 1}`,
      port: 1000 + (i % 10),
      protocol: 'tcp',
      service: 'svc',
      evidence: `banner ${i} <v1.2>`,
      description: 'A weakness of the service that an attacker can use.',
      remediation: 'Apply the vendor update.',
    }));
    const hosts = [...new Set(findings.map((f) => f.host as string))].map((ip) => ({ ip }));
    expect(hosts).toHaveLength(1000);
    const { doc } = runStages({
      findings,
      hosts,
      prior: null,
      exceptions: [],
      settings: {
        sessionId: SESSION_ID,
        target: '10.0.0.0/14',
        toolVersion: '4.2.3',
        startedAt: new Date('2025-03-01T14:00:00Z'),
        schedule: null,
        orc: orcSettingsFrom({}),
      },
      license: { tier: 'business', state: null },
      now: new Date('2025-03-01T14:10:00Z'),
    });
    const trend: TrendPoint[] = Array.from({ length: 100 }, (_, i) => ({
      session_id: `2025${String(i).padStart(4, '0')}_000000`,
      finished_at: new Date(Date.UTC(2024, 0, 1 + i * 3)).toISOString(),
      risk_score: 50 + (i % 20),
      risk_score_operational: null,
    }));
    const report = renderReport(input({ doc, trend }));
    const exec = renderExecSummary(input({ doc, trend }));
    // About 400 bytes a finding (its evidence row, host row and remediation row).
    expect(report.length).toBeGreaterThan(10_000 * 100);
    expect(report.length).toBeLessThan(10_000 * 600);
    expect(exec.length).toBeLessThan(60_000);
    expect(count(sectionOf(exec, 'top-risks'), '<tr><td>')).toBe(5);
  });
});

describe('trend chart', () => {
  const point = (i: number, score: number, op: number | null = null): TrendPoint => ({
    session_id: `202501${String(i + 1).padStart(2, '0')}_000000`,
    finished_at: `2025-01-${String(i + 1).padStart(2, '0')}T00:10:00.000Z`,
    risk_score: score,
    risk_score_operational: op,
  });

  it('is an accessible image with a title and a description of the numbers', () => {
    const svg = trendChart([point(0, 80), point(1, 60, 50), point(2, 45, 30)], '10.0.0.0/24').value;
    expect(svg).toMatch(/^<svg class="trend-chart" [^>]*role="img" aria-labelledby="trend-title trend-desc">/);
    expect(svg).toContain('<title id="trend-title">Risk score trend for 10.0.0.0/24</title>');
    expect(svg).toContain(
      '<desc id="trend-desc">3 sessions from 2025-01-01 to 2025-01-03: risk score 80 at first, 45 in the latest (down 35), operational 30.</desc>',
    );
  });

  it('draws no points as an empty frame that says so', () => {
    const svg = trendChart([], 't').value;
    expect(svg).toContain('<desc id="trend-desc">No sessions of this target have been scored yet.</desc>');
    expect(svg).toContain('>No sessions yet</text>');
    expect(count(svg, '<circle')).toBe(0);
    expect(count(svg, '<polyline')).toBe(0);
  });

  it('draws one point as a dot in the middle, without a line', () => {
    const svg = trendChart([point(0, 40)], 't').value;
    expect(count(svg, '<circle')).toBe(1);
    expect(count(svg, '<polyline')).toBe(0);
    expect(svg).toContain('<circle class="trend-dot" cx="372" cy="136" r="4">');
    expect(svg).toContain('One session so far (2025-01-01): risk score 40.');
  });

  it('draws many points as a line, the operational score dashed where known', () => {
    const points = Array.from({ length: 30 }, (_, i) => point(i % 28, (i * 7) % 101, i >= 10 ? 20 : null));
    const svg = trendChart(points, 't').value;
    expect(count(svg, '<circle')).toBe(30);
    expect(count(svg, '<polyline class="trend-line" points="')).toBe(1);
    const line = /<polyline class="trend-line" points="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(line.split(' ')).toHaveLength(30);
    expect(line.split(' ')[0]).toBe('44,216');
    expect(line.split(' ')[29]).toBe(`700,${Math.round((16 + ((100 - ((29 * 7) % 101)) / 100) * 200) * 10) / 10}`);
    const op = /<polyline class="trend-line-op" points="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(op.split(' ')).toHaveLength(20);
    // At most six date labels plus the last under the axis.
    expect(count(svg, 'y="234"')).toBeLessThanOrEqual(7);
  });
});
