import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  LICENSE_KEY_PREFIX_LENGTH,
  PERMISSIONS,
  permissionsOf,
  tierOfLicenseKey,
  type LicenseValidation,
  type Permission,
} from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { sha256 } from '../licenses/keys.ts';
import { licenseStatus, type LicenseRow } from '../licenses/present.ts';
import { KeyFailureThrottle, pairOf } from './key-throttle.ts';
import { selectLicensesByKeyPrefix } from '../licenses/queries.ts';
import type { LegacyPrincipal, LicensePrincipal } from './principal.ts';

export type KeyLookup =
  | { kind: 'legacy' }
  | { kind: 'license'; row: LicenseRow }
  | { kind: 'not_found' }
  | { kind: 'invalid_format' };

interface KeyDigest {
  key: string;
  digest: Buffer;
  /** The digest in hex: the key of the lookup cache. */
  cacheKey: string;
  legacy: boolean;
  wellFormed: boolean;
  /** The address it last came from, and the throttle's key for that address and the key's prefix. */
  address?: string;
  pair?: string;
}

export type KeyFailure = 'missing' | 'invalid' | 'inactive' | 'revoked' | 'expired';

/** The exact messages for key checks. */
export const KEY_MESSAGES: Record<KeyFailure, string> = {
  missing: 'Missing API key',
  invalid: 'Invalid API key',
  inactive: 'License key is inactive',
  revoked: 'License key has been revoked',
  expired: 'License key has expired',
};

const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS);
/** Compared against when the prefix matches nothing, so that path costs the same as a real comparison. */
const DUMMY_DIGEST = sha256('svc_pro_0000000000000000000000000000000000000000000000000000000000000000-dummy');
const CACHE_TTL_MS = 5_000;
const LEGACY: KeyLookup = Object.freeze({ kind: 'legacy' });
const INVALID_FORMAT: KeyLookup = Object.freeze({ kind: 'invalid_format' });
const CACHE_MAX = 10_000;

/**
 * Resolves `x-api-key` values. Lookup is by the 14-character prefix, then a constant-time
 * comparison of SHA-256 digests (also against a dummy digest when the prefix is unknown).
 * Results, including misses, are cached in process for a few seconds keyed by the digest;
 * any license change on this replica clears the cache, other replicas see it within the TTL.
 */
export class ApiKeyVerifier {
  readonly #db: Kysely<Database>;
  readonly #legacyDigest: Buffer | null;
  readonly #cache = new Map<string, { at: number; lookup: KeyLookup }>();
  readonly #inflight = new Map<string, Promise<KeyLookup>>();
  /** The last key each open connection sent, with its digest; gone with the connection. */
  readonly #byConnection = new WeakMap<object, KeyDigest>();
  /**
   * Bumped by invalidate(). A lookup whose database read started before an invalidation
   * must not put its (possibly pre-revocation) result into the cache afterwards, or a
   * revoked key would keep working for another TTL on this replica.
   */
  #generation = 0;

  readonly #throttle: KeyFailureThrottle;

  constructor(db: Kysely<Database>, legacyKey: string | null, failuresPerMinute = 0) {
    this.#db = db;
    this.#legacyDigest = legacyKey === null ? null : sha256(legacyKey);
    this.#throttle = new KeyFailureThrottle(failuresPerMinute);
  }

  /**
   * A lookup on behalf of a client at `address`: refused with a 429 once that address has had
   * too many unknown keys this minute (KeyFailureThrottle has the rule); an unknown key (bad
   * format or no such key) counts, a real one proves its prefix from that address.
   */
  async lookupFrom(key: string, address: string, connection?: object): Promise<KeyLookup> {
    this.#throttle.admit(address, key);
    const result = await this.lookup(key, connection);
    if (result.kind === 'not_found' || result.kind === 'invalid_format') this.#throttle.recordFailure(address, key);
    else this.#throttle.recordSuccess(address, key);
    return result;
  }

  /**
   * lookupFrom() without waiting, when the answer is in the cache (most key checks): the same
   * throttle, the same counting. Undefined when the key has to be read from the database.
   */
  cachedFrom(key: string, address: string, connection?: object): KeyLookup | undefined {
    const known = this.#digestOf(key, connection);
    // The throttle's (address, prefix) key, kept with the digest while the address is the same.
    if (known.address !== address) {
      known.address = address;
      known.pair = pairOf(address, key);
    }
    const now = Date.now();
    this.#throttle.admit(address, key, now, known.pair);
    let result: KeyLookup | undefined;
    if (known.legacy) result = LEGACY;
    else if (!known.wellFormed) result = INVALID_FORMAT;
    else {
      const cached = this.#cache.get(known.cacheKey);
      if (cached === undefined || now - cached.at >= CACHE_TTL_MS) return undefined;
      result = cached.lookup;
    }
    if (result.kind === 'not_found' || result.kind === 'invalid_format')
      this.#throttle.recordFailure(address, key, now, known.pair);
    else this.#throttle.recordSuccess(address, key, now, known.pair);
    return result;
  }

  invalidate(): void {
    this.#generation++;
    this.#cache.clear();
  }

  /**
   * `connection` (the request's socket) lets a key sent again on the same connection skip its
   * hashing: the agents and scanners that call most keep one connection and one key.
   */
  async lookup(key: string, connection?: object): Promise<KeyLookup> {
    const { digest, cacheKey, legacy, wellFormed } = this.#digestOf(key, connection);
    if (legacy) return LEGACY;
    if (!wellFormed) return INVALID_FORMAT;

    const cached = this.#cache.get(cacheKey);
    if (cached && Date.now() - cached.at < CACHE_TTL_MS) return cached.lookup;

    // Single flight: when an entry expires under load, one query refreshes it for everyone.
    const pending = this.#inflight.get(cacheKey);
    if (pending) return pending;
    const query = this.#query(key, digest, cacheKey).finally(() => this.#inflight.delete(cacheKey));
    this.#inflight.set(cacheKey, query);
    return query;
  }

  /**
   * The key's digest and what follows from it alone. Remembered per connection for the last key
   * it sent: a later key is compared with that one with `===`, which can only tell the client
   * about a string it sent itself; the comparison with the legacy key stays constant-time.
   */
  #digestOf(key: string, connection: object | undefined): KeyDigest {
    const known = connection === undefined ? undefined : this.#byConnection.get(connection);
    if (known !== undefined && known.key === key) return known;
    const digest = sha256(key);
    const computed: KeyDigest = {
      key,
      digest,
      cacheKey: digest.toString('hex'),
      legacy: this.#legacyDigest !== null && timingSafeEqual(digest, this.#legacyDigest),
      wellFormed: tierOfLicenseKey(key) !== null,
    };
    if (connection !== undefined) this.#byConnection.set(connection, computed);
    return computed;
  }

  async #query(key: string, digest: Buffer, cacheKey: string): Promise<KeyLookup> {
    const generation = this.#generation;
    const candidates = await selectLicensesByKeyPrefix(this.#db, key.slice(0, LICENSE_KEY_PREFIX_LENGTH));
    let match: LicenseRow | null = null;
    for (const row of candidates) {
      if (timingSafeEqual(digest, Buffer.from(row.key_hash, 'hex')) && match === null) match = row;
    }
    if (candidates.length === 0) timingSafeEqual(digest, DUMMY_DIGEST);
    const lookup: KeyLookup = match ? { kind: 'license', row: match } : { kind: 'not_found' };

    if (generation === this.#generation) {
      if (this.#cache.size >= CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(cacheKey, { at: Date.now(), lookup });
    }
    return lookup;
  }
}

/** Turn a lookup into a principal, or the failure with its documented message. */
export function authorizeKey(
  lookup: KeyLookup,
  now: Date,
): { ok: true; principal: LicensePrincipal | LegacyPrincipal } | { ok: false; failure: KeyFailure } {
  if (lookup.kind === 'legacy')
    return { ok: true, principal: { kind: 'legacy', tier: 'msp', clientId: null, permissions: ALL_PERMISSIONS } };
  if (lookup.kind !== 'license') return { ok: false, failure: 'invalid' };
  const status = licenseStatus(lookup.row, now);
  if (status !== 'active') return { ok: false, failure: status };
  const { row } = lookup;
  return {
    ok: true,
    principal: {
      kind: 'license',
      tier: row.tier,
      clientId: row.client_id,
      permissions: permissionsOf(row.tier),
      license: row,
    },
  };
}

/** GET /api/license: the validation result for every outcome. */
export function validationResult(lookup: KeyLookup, now: Date): LicenseValidation {
  switch (lookup.kind) {
    case 'legacy':
      return {
        checked_at: now.toISOString(),
        valid: true,
        tier: 'msp',
        client_id: null,
        active: true,
        revoked: false,
        expires_at: null,
        limits: { max_sessions: null, max_agents: null },
        reason: 'ok',
        legacy: true,
      };
    case 'invalid_format':
    case 'not_found':
      return {
        checked_at: now.toISOString(),
        legacy: false,
        valid: false,
        tier: null,
        client_id: null,
        active: false,
        revoked: false,
        expires_at: null,
        limits: { max_sessions: null, max_agents: null },
        reason: lookup.kind,
      };
    case 'license': {
      const { row } = lookup;
      const status = licenseStatus(row, now);
      // No spread of `base` here: this is the answer of nearly every key check.
      return {
        checked_at: now.toISOString(),
        legacy: false,
        valid: status === 'active',
        tier: row.tier,
        client_id: row.client_id,
        active: row.is_active,
        revoked: row.revoked_at !== null,
        expires_at: row.expires_at?.toISOString() ?? null,
        limits: { max_sessions: row.max_sessions, max_agents: row.max_agents },
        reason: status === 'active' ? 'ok' : status,
      };
    }
  }
}
