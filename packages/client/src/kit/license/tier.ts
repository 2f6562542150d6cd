import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { LicenseValidation } from '@svc/protocol';
import { licenseKeyFingerprint, licenseKeySha256 } from '@svc/protocol/node';
import { readCache, writeCache, type LicenseCache } from './cache.ts';
import { parseKeyFormat, type ClientTier } from './format.ts';
import type { KeySource, ResolvedKey } from '../config/license-key.ts';

export const DEFAULT_TTL_S = 86_400;
export const DEFAULT_GRACE_S = 259_200;

/** How the tier was decided. */
export type TierBasis =
  | 'no-key' // community: no key anywhere
  | 'online' // The portal answered now
  | 'cache' // a fresh cached answer, no network
  | 'grace' // portal unreachable, cached tier within the grace period
  | 'grace-ended' // portal unreachable past TTL + grace: community
  | 'expired' // a locally known expires_at has passed: community
  | 'format'; // no usable answer and no matching cache: the key's format tier

export interface LicenseState {
  /** SVC_LICENSED */
  licensed: boolean;
  /** SVC_LICENSE_TIER ('' = community) */
  tier: ClientTier;
  /** SVC_LICENSE_SOURCE */
  source: KeySource | null;
  basis: TierBasis;
  /** The format tier of the key, before any online answer. */
  format_tier: ClientTier;
  /** The portal's verdict as known (now or cached), or null when never known. */
  valid: boolean | null;
  reason: string | null;
  expires_at: string | null;
  client_id: string | null;
  /** licenseKeyFingerprint(): the cache's 16-hex prefix of the key's SHA-256. */
  fingerprint: string | null;
  /** The whole SHA-256 of the key in hex (metadata.license.fingerprint); never the key. */
  key_sha256: string | null;
  validated_at: string | null;
  /** Why the portal could not tell, when it could not. */
  unreachable: string | null;
}

/** The result of asking the portal once. "Cannot tell" is never "invalid" (docs/cli.md#license-tier). */
export type OnlineAnswer = { kind: 'answer'; result: LicenseValidation } | { kind: 'cannot-tell'; why: string };

export interface TierOptions {
  key: ResolvedKey | null;
  cacheFile: string;
  now: () => Date;
  ttlS: number;
  graceS: number;
  /** GET /api/license with the key; null when there is no portal URL to ask. */
  validateOnline: ((key: string) => Promise<OnlineAnswer>) | null;
  warn: (message: string) => void;
}

/** Fingerprints of keys whose format warning this process has shown already. */
const formatWarned = new Set<string>();

/**
 * The protocol's timestamps are `format: 'date-time'`. TypeBox's Value.Check refuses every
 * value of a format it has no checker for, so without this every portal answer would be
 * "cannot tell". RFC 3339 date-time, as the portal writes it (toISOString) and more.
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));

/** Parse the body of a 200 from GET /api/license; anything unexpected is "cannot tell". */
export function answerFrom(status: number, body: unknown): OnlineAnswer {
  if (status !== 200) return { kind: 'cannot-tell', why: `the portal answered HTTP ${status}` };
  if (!Value.Check(LicenseValidation, body))
    return { kind: 'cannot-tell', why: 'the portal answered an unexpected body' };
  return { kind: 'answer', result: body };
}

/**
 * docs/cli.md#license-tier. Called once per run (the CLI keeps the result).
 */
export async function resolveTier(opts: TierOptions): Promise<LicenseState> {
  const { key, now, warn } = opts;
  const format = parseKeyFormat(key?.key ?? null);
  const base: LicenseState = {
    licensed: format.licensed,
    tier: format.tier,
    source: key?.source ?? null,
    basis: 'format',
    format_tier: format.tier,
    valid: null,
    reason: null,
    expires_at: null,
    client_id: null,
    fingerprint: null,
    key_sha256: null,
    validated_at: null,
    unreachable: null,
  };
  if (key === null || !format.licensed) return { ...base, basis: 'no-key' };

  const fingerprint = licenseKeyFingerprint(key.key);
  base.fingerprint = fingerprint;
  base.key_sha256 = licenseKeySha256(key.key);
  // The deprecation / format warning is shown once per run (process), however often the
  // tier is resolved (docs/cli.md#license-tier: one deprecation warning per run).
  if (format.warning !== null && !formatWarned.has(fingerprint)) {
    formatWarned.add(fingerprint);
    warn(format.warning);
  }
  const stored = readCache(opts.cacheFile, warn);
  const cache = stored !== null && stored.fingerprint === fingerprint ? stored : null;
  const at = now();
  const ageS = cache === null ? null : (at.getTime() - Date.parse(cache.validated_at)) / 1000;
  // A cache stamped in the future (the clock went back) is not fresh.
  const fresh = ageS !== null && ageS >= 0 && ageS < opts.ttlS;
  const fromCache = (c: LicenseCache): LicenseState => ({
    ...base,
    valid: c.valid,
    reason: c.reason,
    expires_at: c.expires_at,
    client_id: c.client_id,
    validated_at: c.validated_at,
  });
  const community = (state: LicenseState, basis: TierBasis): LicenseState => ({
    ...state,
    licensed: false,
    tier: '',
    basis,
  });
  const locallyExpired = cache !== null && cache.expires_at !== null && Date.parse(cache.expires_at) <= at.getTime();

  // A locally known past expiry is final whatever the portal could say (a key's expiry never
  // changes after creation): community, without asking (docs/cli.md#license-tier: whatever the network says).
  if (cache !== null && locallyExpired) return expired(community(fromCache(cache), 'expired'), warn);

  if (cache !== null && fresh) {
    if (!cache.valid) return invalid(community(fromCache(cache), 'cache'), warn);
    return { ...fromCache(cache), tier: cache.tier, basis: 'cache' };
  }

  const answer: OnlineAnswer =
    opts.validateOnline === null
      ? { kind: 'cannot-tell', why: 'no portal URL is configured (CONSULTATION_API_URL)' }
      : await opts.validateOnline(key.key);

  if (answer.kind === 'answer') {
    const r = answer.result;
    const tier: ClientTier = r.valid ? (r.legacy ? 'legacy' : (r.tier ?? format.tier)) : '';
    const record: LicenseCache = {
      version: 1,
      fingerprint,
      valid: r.valid,
      tier,
      reason: r.reason,
      client_id: r.client_id,
      expires_at: r.expires_at,
      validated_at: at.toISOString(),
      portal_checked_at: r.checked_at,
    };
    try {
      writeCache(opts.cacheFile, record);
    } catch (err) {
      warn(
        `Cannot write ${opts.cacheFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the license is checked online again next run`,
      );
    }
    const state = fromCache(record);
    if (!r.valid) return invalid(community({ ...state, basis: 'online' }, 'online'), warn);
    // The portal's clock may still say valid while this host already knows the expiry passed.
    if (r.expires_at !== null && Date.parse(r.expires_at) <= at.getTime())
      return expired(community(state, 'expired'), warn);
    return { ...state, tier, basis: 'online' };
  }

  // The portal cannot tell: the cache decides, within its limits, else the format tier.
  const unreachable = answer.why;
  if (cache === null) return { ...base, basis: 'format', unreachable };
  const state = { ...fromCache(cache), unreachable };
  if (!cache.valid) return invalid(community(state, 'cache'), warn);
  const graceEnds = Date.parse(cache.validated_at) + (opts.ttlS + opts.graceS) * 1000;
  if (at.getTime() < graceEnds) {
    warn(
      `Cannot check the license online (${unreachable}); using the cached ${cache.tier} tier until ${new Date(graceEnds).toISOString()}`,
    );
    return { ...state, tier: cache.tier, basis: 'grace' };
  }
  warn(
    `Cannot check the license online (${unreachable}) and the last successful check is older than the grace period; running as community`,
  );
  return community(state, 'grace-ended');
}

function invalid(state: LicenseState, warn: (message: string) => void): LicenseState {
  warn(
    `The portal reports this license key as not valid (reason: ${state.reason ?? 'unknown'}); running as community until it is valid again`,
  );
  return state;
}

function expired(state: LicenseState, warn: (message: string) => void): LicenseState {
  warn(`The license key expired at ${state.expires_at}; running as community`);
  return state;
}
