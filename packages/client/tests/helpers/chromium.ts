import { existsSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium for the report tests, the way the portal's browser tests start it
 * (never a downloaded browser). A missing Chromium fails the test with the fix.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} not found. The browser tests need Debian's "chromium" package: run \`bash scripts/setup-system.sh\` ` +
        '(as root), or `apt-get install chromium`. Never `npx playwright install`.',
    );
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * The color of a 1x1 PNG screenshot as `#rrggbb`. With one pixel every PNG filter type
 * leaves the bytes as they are (no left or upper neighbour), so inflating IDAT is enough.
 */
export function pixelOf(png: Buffer): string {
  if (png.readUInt32BE(16) !== 1 || png.readUInt32BE(20) !== 1) throw new Error('not a 1x1 PNG');
  const chunks: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    if (type === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(chunks));
  return `#${[...raw.subarray(1, 4)].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}
