import fs from 'node:fs/promises';
import { EXPORT_FORMATS, EXPORT_MEDIA, exportFileName } from '@svc/protocol';
import { CSV_COLUMNS } from '@svc/protocol/node';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { http, withToken } from '@svc/test-support/http';
import { expectAccessible, expectNoConsoleErrors, openPage, untilSettled, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { type Seeded, seedSessions } from './helpers/seed.ts';

/**
 * The session view's Export control in a real browser against a real portal: each format is
 * fetched with the signed-in user's token and saved under the export's file name, with exactly
 * what the API answers.
 */

describe('exporting a session from the console', () => {
  let portal: TestPortal;
  let browser: Browser;
  let seeded: Seeded;
  let admin: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    seeded = await seedSessions(portal, { clientId: 'export-co', target: '10.18.0.0/24', sessions: 2, findings: 12 });
    admin = await portal.adminToken();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it('saves CSV, SARIF and DefectDojo exports with the content the API serves', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = seeded.uploads.at(-1)!.session_id;
    const findings = seeded.docs.at(-1)!.findings ?? [];
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=export-co`);
      await page.getByRole('heading', { name: 'Export findings' }).waitFor();
      await untilSettled(page);
      await expectAccessible(page);
      const saved: Record<string, string> = {};
      for (const format of EXPORT_FORMATS) {
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: `Export ${EXPORT_MEDIA[format].label}` }).click(),
        ]);
        expect(download.suggestedFilename()).toBe(exportFileName(id, format));
        saved[format] = await fs.readFile((await download.path())!, 'utf8');
        const api = await http(portal.url, 'GET', `/api/sessions/${id}/export?format=${format}&client_id=export-co`, {
          headers: withToken(admin),
        });
        expect(api.status).toBe(200);
        expect(saved[format]).toBe(api.text);
      }
      const csv = saved['csv']!.split('\r\n');
      expect(csv[0]).toBe(CSV_COLUMNS.join(','));
      expect(csv).toHaveLength(findings.length + 2);
      const sarif = JSON.parse(saved['sarif']!) as { version: string; runs: { results: unknown[] }[] };
      expect(sarif.version).toBe('2.1.0');
      expect(sarif.runs[0]!.results).toHaveLength(findings.length);
      const dojo = JSON.parse(saved['defectdojo']!) as { findings: { unique_id_from_tool: string }[] };
      expect(dojo.findings.map((f) => f.unique_id_from_tool)).toEqual(findings.map((f) => f.fingerprint));
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
