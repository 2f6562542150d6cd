import { expect } from 'vitest';

/**
 * What a share link shows of a session's report: the share page must frame
 * `/share/frame?token=…&file=report.html`, and that frame is the stored report with the
 * portal's bridge script inserted before its last closing body tag.
 */
export async function expectSharedReport(portalUrl: string, token: string, report: string): Promise<void> {
  const page = await fetch(`${portalUrl}/share/?token=${token}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(`src="frame?token=${token}&amp;file=report.html"`);
  const res = await fetch(`${portalUrl}/share/frame?token=${token}&file=report.html`);
  expect(res.status).toBe(200);
  const framed = await res.text();
  const last = report.lastIndexOf('</body>');
  expect(framed.startsWith(report.slice(0, last))).toBe(true);
  expect(framed.endsWith(report.slice(last))).toBe(true);
  expect(framed.slice(last, framed.length - (report.length - last))).toContain('data-svc-share-bridge');
}
