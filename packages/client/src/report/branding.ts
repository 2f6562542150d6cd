import path from 'node:path';
import { httpUrl } from '@svc/protocol';
import type { Branding } from './types.ts';

/**
 * docs/scanner/report.md from the environment. A color goes into the
 * report's CSS, so only plain color syntax is accepted (hex, rgb()/hsl() with numbers, a
 * color name): anything else (a `;`, a brace, `url(`...) is refused with a warning and the
 * default used. A logo that cannot be read, has an unknown type or is too big is skipped
 * with a warning: the report never fails for its branding.
 */

export const BRANDING_DEFAULTS = {
  primaryColor: '#dc3545',
  headerBg: '#1a1a2e',
  headerText: '#ffffff',
  subtitle: 'Network Security Assessment',
  footerText: 'This report is confidential and intended only for the organisation named in it.',
} as const;

/** Bigger logos would bloat every report; a header logo needs far less. */
export const MAX_LOGO_BYTES = 512 * 1024;

const LOGO_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

const COLOR_PATTERNS = [
  /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i,
  /^(?:rgb|rgba|hsl|hsla)\(\s*[-+0-9.%]+(?:\s*[,/]?\s*[-+0-9.%]+(?:deg)?){2,3}\s*\)$/i,
  /^[a-z]{3,30}$/i,
];

/** A color safe to place in a CSS declaration, or null. */
export function cssColor(value: string): string | null {
  const v = value.trim();
  return COLOR_PATTERNS.some((p) => p.test(v)) ? v : null;
}

const EMAIL = /^[^\s@<>"'()[\]\\,;:]+@[^\s@<>"'()[\]\\,;:]+\.[^\s@<>"'()[\]\\,;:]+$/;

/** An e-mail address usable in a mailto: link, or null. */
export function footerEmail(value: string): string | null {
  const v = value.trim();
  return EMAIL.test(v) ? v : null;
}

/** An http(s) URL usable as a link (never javascript: or data:: the protocol's httpUrl), or null. */
export const footerUrl = (value: string): string | null => httpUrl(value.trim());

export type Env = Readonly<Record<string, string | undefined>>;

const set = (env: Env, name: string): string | null => {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v;
};

export function brandingFromEnv(
  env: Env,
  readFile: (file: string) => Uint8Array,
  warn: (message: string) => void = (m) => process.emitWarning(m),
): Branding {
  const color = (name: string, fallback: string): string => {
    const v = set(env, name);
    if (v === null) return fallback;
    const ok = cssColor(v);
    if (ok === null) warn(`${name} is not a CSS color (${JSON.stringify(v)}): using ${fallback}`);
    return ok ?? fallback;
  };
  const checked = (name: string, check: (v: string) => string | null, what: string): string | null => {
    const v = set(env, name);
    if (v === null) return null;
    const ok = check(v);
    if (ok === null) warn(`${name} is not ${what} (${JSON.stringify(v)}): left out of the report`);
    return ok;
  };
  return {
    primaryColor: color('REPORT_PRIMARY_COLOR', BRANDING_DEFAULTS.primaryColor),
    headerBg: color('REPORT_HEADER_BG', BRANDING_DEFAULTS.headerBg),
    headerText: color('REPORT_HEADER_TEXT', BRANDING_DEFAULTS.headerText),
    subtitle: set(env, 'REPORT_SUBTITLE')?.trim() ?? BRANDING_DEFAULTS.subtitle,
    footerText: set(env, 'REPORT_FOOTER_TEXT')?.trim() ?? BRANDING_DEFAULTS.footerText,
    footerEmail: checked('REPORT_FOOTER_EMAIL', footerEmail, 'an e-mail address'),
    footerUrl: checked('REPORT_FOOTER_URL', footerUrl, 'an http(s) URL'),
    logo: logoFrom(set(env, 'COMPANY_LOGO'), readFile, warn),
  };
}

function logoFrom(
  file: string | null,
  readFile: (file: string) => Uint8Array,
  warn: (message: string) => void,
): Branding['logo'] {
  if (file === null) return null;
  const mime = LOGO_TYPES[path.extname(file).toLowerCase()];
  if (mime === undefined) {
    warn(`COMPANY_LOGO ${file}: not a PNG, JPEG, GIF, WebP or SVG file; the report has no logo`);
    return null;
  }
  let bytes: Uint8Array;
  try {
    bytes = readFile(file);
  } catch (err) {
    warn(`COMPANY_LOGO ${file} could not be read (${(err as Error).message}); the report has no logo`);
    return null;
  }
  if (bytes.length === 0 || bytes.length > MAX_LOGO_BYTES) {
    warn(`COMPANY_LOGO ${file} is ${bytes.length} bytes (1 to ${MAX_LOGO_BYTES}); the report has no logo`);
    return null;
  }
  return { mime, base64: Buffer.from(bytes).toString('base64') };
}

/** The defaults, for runs that take no white-label settings (the synthetic collection). */
export function defaultBranding(): Branding {
  return { ...BRANDING_DEFAULTS, footerEmail: null, footerUrl: null, logo: null };
}
