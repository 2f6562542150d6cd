import fs from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';

/**
 * Screenshots are taken only when asked (`SCREENSHOTS=1`, which `npm run screenshots` sets), into
 * the ignored test-output/screenshots/, so a test run never rewrites a tracked file;
 * scripts/screenshots.ts then copies the docs' pictures into docs/ on purpose.
 */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../test-output/screenshots');

/** True when this run was asked for screenshots. */
export function screenshotsWanted(): boolean {
  return process.env['SCREENSHOTS'] === '1';
}

/** Saves `target` as test-output/screenshots/<name> when asked; does nothing otherwise. */
export async function screenshot(
  target: Page | Locator,
  name: string,
  opts: { fullPage?: boolean } = {},
): Promise<void> {
  if (!screenshotsWanted()) return;
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, name);
  if ('goto' in target) await target.screenshot({ path: file, fullPage: opts.fullPage ?? false });
  else await target.screenshot({ path: file });
}
