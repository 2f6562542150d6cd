import { sha256Hex } from '@svc/protocol/node';
import { openSecret, sealSecret } from '../identity/key-encryption.ts';

/**
 * Share tokens at rest: a backup or a read of the database must not open
 * anyone's report. A token is looked up by its SHA-256, the rule license keys are stored by
 * (licenseKeySha256; a share token has no blanks to trim); 256 random bits need no slow hash.
 * So that the console, the session listing, a re-upload's answer and `scan_completed` can still
 * show the link, the token is also kept sealed under the key-encryption key, which is not in
 * the database or a backup (identity/key-encryption.ts), the hash as authenticated data: a
 * sealed copy cannot be moved to another row.
 */
export function shareTokenHash(token: string): string {
  return sha256Hex(token);
}

/** How a share_tokens row holds its token. */
export interface StoredShareToken {
  /** Clear: only a row written before migration 0020, until the portal's next start seals it. */
  token: string | null;
  token_hash: string;
  token_sealed: string | null;
}

/** A stored token the key-encryption key does not open (a wrong key, an edited row). */
export class UnopenableShareToken extends Error {
  constructor(hash: string) {
    super(
      `the share token with hash ${hash.slice(0, 12)}… does not decrypt with SVC_IDENTITY_KEY_ENCRYPTION_KEY: start with the key this database was first started with`,
    );
    this.name = 'UnopenableShareToken';
  }
}

const aadOf = (hash: string) => `share-token:${hash}`;

export class ShareTokenSeal {
  readonly #kek: Buffer;

  constructor(kek: Buffer) {
    this.#kek = kek;
  }

  /** What a new token is stored as: never the token itself. */
  seal(token: string): { token_hash: string; token_sealed: string } {
    const hash = shareTokenHash(token);
    return { token_hash: hash, token_sealed: sealSecret(this.#kek, aadOf(hash), token) };
  }

  /** The token a stored row holds; UnopenableShareToken when its sealed copy does not open. */
  open(row: StoredShareToken): string {
    if (row.token !== null) return row.token;
    const clear = row.token_sealed === null ? null : openSecret(this.#kek, aadOf(row.token_hash), row.token_sealed);
    if (clear === null) throw new UnopenableShareToken(row.token_hash);
    return clear;
  }

  /** Whether this key opens a sealed copy (the start's and the restore's check of the key). */
  opens(hash: string, sealed: string): boolean {
    return openSecret(this.#kek, aadOf(hash), sealed) !== null;
  }
}
