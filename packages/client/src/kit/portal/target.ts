import { isIPv4 } from 'node:net';
import {
  MAX_UPLOAD_LIMIT_MB,
  parseUploadLimitMb,
  UPLOAD_LIMIT_BYTES,
  UPLOAD_LIMIT_SETTING,
  uploadLimitBytes,
} from '@svc/protocol';
import { deriveEndpoint, EndpointError, type PortalEndpoint } from '../config/endpoints.ts';
import type { Settings } from '../config/settings.ts';
import { PortalError } from './errors.ts';
import { resolveKey } from '../config/license-key.ts';

/** Where and as whom the client talks to the portal. */
export interface PortalTarget {
  /** CONSULTATION_API_URL: the upload URL every other endpoint is derived from. */
  uploadUrl: string;
  apiKey: string | null;
  jwt: string | null;
  timeoutS: number;
  /** Largest upload body sent (SVC_UPLOAD_MAX_MB, the portal's limit); the protocol's 25 MB when absent. */
  uploadLimitBytes?: number;
}

export const DEFAULT_TIMEOUT_S = 30;

const configError = (message: string) => new PortalError('config', message);

/** The setting that accepts plain http to a portal on another machine (`--allow-insecure-http` on svc). */
export const ALLOW_INSECURE_HTTP = 'SVC_ALLOW_INSECURE_HTTP';

/** How a portal URL may be reached: plain http to another machine only when allowed explicitly. */
export interface TransportPolicy {
  allowInsecureHttp: boolean;
}

/** SVC_ALLOW_INSECURE_HTTP's value as a yes (1, true, yes, on) or no. */
export const insecureHttpAllowed = (setting: string | undefined): boolean =>
  /^(1|true|yes|on)$/i.test(setting?.trim() ?? '');

/** The flag, else SVC_ALLOW_INSECURE_HTTP. */
export function transportPolicyOf(settings: Settings, flag?: boolean): TransportPolicy {
  return { allowInsecureHttp: flag === true || insecureHttpAllowed(settings.get(ALLOW_INSECURE_HTTP)) };
}

/** 127.0.0.0/8, ::1 and `localhost`, as the WHATWG parser leaves a URL's host (IPv4 in dotted form, IPv6 in brackets). */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host === '[::1]') return true;
  return isIPv4(host) && host.startsWith('127.');
}

/**
 * The one transport rule of every portal URL svc and svcd use: https anywhere; plain http
 * only to this machine, or elsewhere when the policy allows it (then `warn` says so). Over
 * plain http a network attacker reads the key and can answer heartbeats with commands.
 */
function checkTransport(url: URL, policy: TransportPolicy, warn?: (message: string) => void): void {
  if (url.protocol !== 'http:' || isLoopback(url.hostname)) return;
  if (!policy.allowInsecureHttp)
    throw configError(
      `Portal URL ${url.origin} uses plain http to ${url.hostname}, which is not this machine: the license key and the portal's answers would cross the network unprotected. Use https, or accept the risk with ${ALLOW_INSECURE_HTTP}=true (svc: --allow-insecure-http)`,
    );
  warn?.(
    `plain http to ${url.hostname}: the license key and the portal's answers cross the network unprotected (allowed explicitly)`,
  );
}

/**
 * The upload URL from `-u` or CONSULTATION_API_URL. Besides the upload URL itself
 * (`https://portal.example/api/upload`), the portal's bare origin is accepted and means its
 * upload URL (`https://portal.example` → `https://portal.example/api/upload`). Plain http to
 * another machine is refused unless `policy` allows it (checkTransport).
 */
export function uploadUrlOf(input: string, policy: TransportPolicy, warn?: (message: string) => void): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw configError(`Portal URL is not a URL: ${input}`);
  }
  if (url.pathname === '/' || url.pathname === '') {
    url.pathname = '/api/upload';
    url.search = '';
    url.hash = '';
  }
  const result = url.toString();
  try {
    deriveEndpoint(result, 'health');
  } catch (err) {
    if (err instanceof EndpointError) throw configError(err.message);
    throw err;
  }
  checkTransport(url, policy, warn);
  return result;
}

export function endpoint(target: PortalTarget, name: PortalEndpoint): string {
  return deriveEndpoint(target.uploadUrl, name);
}

export interface TargetFlags {
  url?: string | undefined;
  /** `--allow-insecure-http`. */
  allowInsecureHttp?: boolean | undefined;
  key?: string | undefined;
  jwt?: string | undefined;
  timeout?: string | undefined;
}

/** SVC_UPLOAD_MAX_MB in bytes: the portal's upload limit, to refuse a larger upload before sending it. */
export function uploadLimitOf(settings: Settings): number {
  const raw = settings.get(UPLOAD_LIMIT_SETTING);
  if (raw === undefined) return UPLOAD_LIMIT_BYTES;
  const mb = parseUploadLimitMb(raw);
  if (mb === null)
    throw configError(
      `${UPLOAD_LIMIT_SETTING} must be a whole number of MB from 1 to ${MAX_UPLOAD_LIMIT_MB}, the portal's upload limit (got "${raw}")`,
    );
  return uploadLimitBytes(mb);
}

/** The timeout flag or setting in seconds: a whole number from 1 to 3600. */
export function timeoutOf(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_S;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 3600)
    throw configError(`--timeout must be a whole number of seconds from 1 to 3600 (got "${raw}")`);
  return Number(raw);
}

/**
 * Flags first, then the settings: URL from `-u` or CONSULTATION_API_URL; key from `-k` or the
 * license key resolution order (docs/cli.md#license-tier); JWT from `-j`,
 * SVC_JWT or CONSULTATION_JWT (docs/api.md#credentials).
 */
export function resolveTarget(
  settings: Settings,
  flags: TargetFlags,
  opts: { home: string; warn?: (message: string) => void },
): PortalTarget {
  const rawUrl = flags.url ?? settings.get('CONSULTATION_API_URL');
  if (rawUrl === undefined)
    throw configError(
      'No portal URL: pass -u <url> or set CONSULTATION_API_URL (in the environment or a -c config file)',
    );
  const uploadUrl = uploadUrlOf(rawUrl, transportPolicyOf(settings, flags.allowInsecureHttp), opts.warn);
  const apiKey =
    flags.key !== undefined && flags.key !== ''
      ? flags.key
      : (resolveKey(settings, opts.home, opts.warn ?? (() => undefined))?.key ?? null);
  const jwt = flags.jwt ?? settings.get('SVC_JWT') ?? settings.get('CONSULTATION_JWT') ?? null;
  return { uploadUrl, apiKey, jwt, timeoutS: timeoutOf(flags.timeout), uploadLimitBytes: uploadLimitOf(settings) };
}
