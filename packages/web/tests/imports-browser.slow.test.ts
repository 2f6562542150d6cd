import fs from 'node:fs/promises';
import path from 'node:path';
import { scannerSessionId } from '@svc/protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { createLicense } from '@svc/test-support/factories';
import { ANON_FTP, FIRST_SCAN, SCAN_END, SCAN_START, withOids, withTemplates } from '@svc/test-support/foreign-items';
import { type ForeignItem, nessusV2, nucleiJsonl, openvasReport } from '@svc/test-support/foreign-reports';
import { http, withToken } from '@svc/test-support/http';
import { until } from '@svc/test-support/wait';
import { expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/**
 * Sessions imported from other scanners, as people see them: `svc import --upload` of a Nessus
 * v2 file, a Greenbone report, Nuclei JSON lines and nmap XML, each opened in the console with
 * its findings and its report; a second Nessus import of the same target shows the triage made
 * on the first in the console and the finding that went away as resolved.
 */

const NMAP_XML = path.resolve(import.meta.dirname, '../../client/tests/fixtures/nmap/real-lab-odd-ports.xml');
const CLIENT = 'imports-co';

describe('imported sessions in the console', () => {
  let portal: TestPortal;
  let browser: Browser;
  let key: string;
  let work: string;
  let lastId = '';
  const imported: Record<string, string> = {};

  /** Session ids have one-second resolution: each import starts once the clock has left the previous one's second. */
  async function importFile(file: string, ...args: string[]): Promise<string> {
    await until(() => scannerSessionId(new Date()) > lastId, 5_000);
    const r = await runCli(SVC, ['import', file, '--upload', '--json', ...args], {
      env: {
        CONSULTATION_API_URL: `${portal.url}/api/upload`,
        SVC_API_KEY: key,
        SVC_SESSIONS_DIR: path.join(work, 'sessions'),
      },
      timeoutMs: 90_000,
    });
    if (r.code !== 0) throw new Error(`svc import ${file}: ${r.code} ${r.stderr}`);
    lastId = (JSON.parse(r.stdout) as { session_id: string }).session_id;
    return lastId;
  }

  async function write(name: string, text: string): Promise<string> {
    const p = path.join(work, name);
    await fs.writeFile(p, text);
    return p;
  }

  beforeAll(async () => {
    portal = await startConsolePortal();
    key = (await createLicense(portal, { tier: 'business', client_id: CLIENT })).key;
    work = await tempHome();
    const run = (items: readonly ForeignItem[]) => ({ start: SCAN_START, end: SCAN_END, items });
    imported['nessus'] = await importFile(
      await write('first.nessus', nessusV2(run(FIRST_SCAN))),
      '--target',
      'lab-nessus',
    );
    imported['openvas'] = await importFile(await write('report.xml', openvasReport(run(withOids(FIRST_SCAN)))));
    imported['nuclei'] = await importFile(await write('nuclei.jsonl', nucleiJsonl(run(withTemplates(FIRST_SCAN)))));
    imported['nmap'] = await importFile(NMAP_XML);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    if (work) await fs.rm(work, { recursive: true, force: true });
  });

  const rows = (page: Page) => page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
  const statuses = (page: Page) =>
    rows(page)
      .locator('select[aria-label^="Remediation status of"]')
      .evaluateAll((els) =>
        els.map((e) => `${e.getAttribute('aria-label')}: ${(e as unknown as { value: string }).value}`),
      );

  async function storedFindings(id: string): Promise<{ title: string }[]> {
    const res = await http(portal.url, 'GET', `/api/sessions/${id}/findings?client_id=${CLIENT}&limit=200`, {
      headers: withToken(await portal.adminToken()),
    });
    if (res.status !== 200) throw new Error(`findings: ${res.status} ${res.text}`);
    return res.body.findings as { title: string }[];
  }

  for (const format of ['nessus', 'openvas', 'nuclei', 'nmap'] as const)
    it(`a ${format} import opens with its findings and its report`, async () => {
      const id = imported[format]!;
      const expected = (await storedFindings(id)).map((f) => f.title);
      expect(expected.length).toBeGreaterThan(0);
      const p = await openPage(browser, WIDTHS.desktop);
      try {
        await signIn(p.page, portal, undefined, `/collect/?session=${id}&client_id=${CLIENT}`);
        await expect.poll(() => rows(p.page).count()).toBe(expected.length);
        expect((await rows(p.page).locator('td:nth-child(3) strong').allTextContents()).sort()).toStrictEqual(
          [...expected].sort(),
        );
        const report = p.page.frameLocator('iframe.report-frame');
        await expect.poll(() => report.locator('body').textContent()).toContain(expected[0]!);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });

  it('the next Nessus import of the target shows the triage made on the first, and what went away as resolved', async () => {
    const admin = await portal.adminToken();
    const triage = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: {
        session_id: imported['nessus'],
        client_id: CLIENT,
        items: [{ title: FIRST_SCAN[0]!.name, status: 'in_progress', note: 'OPS-77' }],
      },
    });
    expect(triage.status, triage.text).toBe(200);
    const second = FIRST_SCAN.filter((i) => i !== ANON_FTP);
    // The second scan states it looked at every TCP port (the policy's port_range): what it no
    // longer reports on a host it scanned is resolved, not merely unchecked (docs/findings-of-record.md#coverage).
    const everyPort = nessusV2({ start: SCAN_START, end: SCAN_END, items: second }).replace(
      '</ServerPreferences>',
      '<preference><name>port_range</name><value>all</value></preference>\n</ServerPreferences>',
    );
    const id = await importFile(await write('second.nessus', everyPort), '--target', 'lab-nessus');
    const p = await openPage(browser, WIDTHS.desktop);
    try {
      await signIn(p.page, portal, undefined, `/collect/?session=${id}&client_id=${CLIENT}`);
      // The second scan's findings, and the one it no longer found, marked as resolved by it.
      await expect.poll(() => rows(p.page).count()).toBe(second.length + 1);
      const resolved = rows(p.page).filter({
        has: p.page.locator('[data-mark="change"]', { hasText: 'Resolved by this scan' }),
      });
      expect(await resolved.locator('td:nth-child(3) strong').allTextContents()).toStrictEqual([ANON_FTP.name]);
      const shown = await statuses(p.page);
      const triaged = shown.filter((s) => s.includes(FIRST_SCAN[0]!.name));
      expect(triaged.length).toBeGreaterThan(0);
      for (const s of triaged) expect(s).toMatch(/: in_progress$/);
      for (const s of shown.filter((x) => !triaged.includes(x))) expect(s).toMatch(/: persistent$/);
      const stored = await http(portal.url, 'GET', `/api/download?session=${id}&client_id=${CLIENT}`, {
        headers: withToken(admin),
      });
      const doc = (typeof stored.body === 'string' ? JSON.parse(stored.body) : stored.body) as {
        remediation_resolved: { title: string; status: string }[];
      };
      expect(doc.remediation_resolved.map((r) => `${r.title} ${r.status}`)).toStrictEqual([
        `${ANON_FTP.name} resolved`,
      ]);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
