import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core, for every package's browser tests
 * (never a downloaded browser). A missing Chromium fails the test with how to install it; it
 * is never skipped.
 */
export const CHROMIUM = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Throws the set-up instructions when Debian's Chromium is not installed. */
export function assertChromiumInstalled(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} not found. The browser tests need Debian's "chromium" package: run \`bash scripts/setup-system.sh\` ` +
        '(as root; `npm test` runs it first), or `apt-get install chromium`. Never `npx playwright install`.',
    );
}

/** A headless browser; each test opens its own context on it. */
export function launchChromium(): Promise<Browser> {
  assertChromiumInstalled();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** A headless browser with a profile in `userDataDir` (cookies and storage persist across its pages). */
export function launchChromiumProfile(
  userDataDir: string,
  viewport: { width: number; height: number },
): Promise<BrowserContext> {
  assertChromiumInstalled();
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
}
