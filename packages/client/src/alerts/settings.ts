import { checkRemoteConfigValue, type RemoteConfigKey } from '@svc/protocol';

/**
 * Alert settings from the client's settings (config files, environment). Rules and channels
 * follow docs/scanner/alerts.md; the value rules of the three remotely
 * editable keys (ALERT_ENABLED, ALERT_RISK_THRESHOLD, ALERT_ON_NEW_CRITICAL) are push_config's,
 * so a value the portal accepts is one the scanner accepts. A bad value never stops a scan:
 * it is reported through `warn` and the default is used.
 */

export const ALERT_DEFAULTS = {
  enabled: true,
  risk_threshold: 60,
  on_new_critical: true,
  on_scan_complete: false,
  timeout_s: 10,
} as const;
export const SMTP_DEFAULTS = { host: 'localhost', port: 587, securePort: 465, from: 'svc-alerts@localhost' } as const;

export type ChannelName = 'email' | 'slack' | 'webhook';

export interface AlertRules {
  enabled: boolean;
  risk_threshold: number;
  on_new_critical: boolean;
  on_scan_complete: boolean;
}

export interface EmailChannel {
  to: string[];
  from: string;
  host: string;
  port: number;
  /** Implicit TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string | null;
  pass: string | null;
}

export interface AlertChannels {
  email: EmailChannel | null;
  slack: string | null;
  webhook: string | null;
}

export interface AlertSettings extends AlertRules {
  /** Per-channel bound on one delivery, milliseconds. */
  timeout_ms: number;
  channels: AlertChannels;
}

export interface SettingsSource {
  get(key: string): string | undefined;
}

const TRUE = /^(true|1|yes|on)$/i;
const FALSE = /^(false|0|no|off)$/i;

function remoteRule(src: SettingsSource, key: RemoteConfigKey, fallback: string, warn: (m: string) => void): string {
  const raw = src.get(key);
  if (raw === undefined) return fallback;
  const checked = checkRemoteConfigValue(key, raw.trim());
  if (checked.ok) return checked.value;
  warn(`${key} ${checked.reason}; using the default ${fallback}`);
  return fallback;
}

function bool(src: SettingsSource, key: string, fallback: boolean, warn: (m: string) => void): boolean {
  const raw = src.get(key)?.trim();
  if (raw === undefined) return fallback;
  if (TRUE.test(raw)) return true;
  if (FALSE.test(raw)) return false;
  warn(`${key} must be true or false; using the default ${fallback}`);
  return fallback;
}

function int(
  src: SettingsSource,
  key: string,
  fallback: number,
  min: number,
  max: number,
  warn: (m: string) => void,
): number {
  const raw = src.get(key)?.trim();
  if (raw === undefined) return fallback;
  if (/^\d{1,9}$/.test(raw) && Number(raw) >= min && Number(raw) <= max) return Number(raw);
  warn(`${key} must be an integer from ${min} to ${max}; using the default ${fallback}`);
  return fallback;
}

/** An http(s) URL or null; anything else is warned about without echoing it (webhook URLs are secrets). */
export function httpUrl(src: SettingsSource, key: string, warn: (m: string) => void): string | null {
  const raw = src.get(key)?.trim();
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    warn(`${key} is not a valid URL; that alert channel is off`);
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    warn(`${key} must be an http or https URL; that alert channel is off`);
    return null;
  }
  return url.href;
}

const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

/** A comma-separated list of plain addresses; invalid ones are dropped with a warning. */
function addresses(raw: string, key: string, warn: (m: string) => void): string[] {
  const out: string[] = [];
  for (const a of raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    if (ADDRESS.test(a)) out.push(a);
    else warn(`${key}: "${a}" is not an e-mail address; skipped`);
  }
  return out;
}

function emailChannel(src: SettingsSource, warn: (m: string) => void): EmailChannel | null {
  const key = src.get('ALERT_EMAIL') !== undefined ? 'ALERT_EMAIL' : 'REMINDER_EMAIL';
  const raw = src.get(key);
  if (raw === undefined) return null;
  const to = addresses(raw, key, warn);
  if (to.length === 0) return null;
  const secure = bool(src, 'SMTP_SECURE', false, warn);
  const fromRaw = src.get('ALERT_EMAIL_FROM')?.trim();
  const from = fromRaw !== undefined && ADDRESS.test(fromRaw) ? fromRaw : SMTP_DEFAULTS.from;
  if (fromRaw !== undefined && from !== fromRaw)
    warn(`ALERT_EMAIL_FROM is not an e-mail address; using ${SMTP_DEFAULTS.from}`);
  const host = src.get('SMTP_HOST')?.trim() ?? SMTP_DEFAULTS.host;
  return {
    to,
    from,
    host,
    port: int(src, 'SMTP_PORT', secure ? SMTP_DEFAULTS.securePort : SMTP_DEFAULTS.port, 1, 65_535, warn),
    secure,
    user: src.get('SMTP_USER')?.trim() ?? null,
    pass: src.get('SMTP_PASS') ?? null,
  };
}

export function alertSettingsFrom(src: SettingsSource, warn: (message: string) => void = () => {}): AlertSettings {
  return {
    enabled: remoteRule(src, 'ALERT_ENABLED', String(ALERT_DEFAULTS.enabled), warn) === 'true',
    risk_threshold: Number(remoteRule(src, 'ALERT_RISK_THRESHOLD', String(ALERT_DEFAULTS.risk_threshold), warn)),
    on_new_critical: remoteRule(src, 'ALERT_ON_NEW_CRITICAL', String(ALERT_DEFAULTS.on_new_critical), warn) === 'true',
    on_scan_complete: bool(src, 'ALERT_ON_SCAN_COMPLETE', ALERT_DEFAULTS.on_scan_complete, warn),
    timeout_ms: int(src, 'ALERT_TIMEOUT', ALERT_DEFAULTS.timeout_s, 1, 300, warn) * 1000,
    channels: {
      email: emailChannel(src, warn),
      slack: httpUrl(src, 'ALERT_SLACK_WEBHOOK', warn),
      webhook: httpUrl(src, 'ALERT_WEBHOOK_URL', warn),
    },
  };
}

/** The channels that are set, in a fixed order. */
export function configuredChannels(channels: AlertChannels): ChannelName[] {
  return (['email', 'slack', 'webhook'] as const).filter((c) => channels[c] !== null);
}
