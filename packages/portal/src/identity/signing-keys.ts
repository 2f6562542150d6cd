import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { decryptPrivateJwk, encryptPrivateJwk } from './key-encryption.ts';
import {
  clearSigningKeys,
  insertSigningKey,
  lockSigningKeys,
  newestSigningKey,
  publicJwkRows,
  storeEncryptedPrivateKey,
} from './queries.ts';

export const SIGNING_ALG = 'EdDSA';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/**
 * The identity provider's Ed25519 signing key lives in the database so every replica
 * signs and verifies with the same keys; its private half only encrypted under `kek`
 * (key-encryption.ts). The first start creates it under an advisory lock so two replicas
 * starting together agree on one key; a start also encrypts any key an earlier version
 * stored in clear, and empties the clear column.
 */
export async function ensureSigningKey(db: Kysely<Database>, kek: Buffer): Promise<SigningKey> {
  const row = await db.transaction().execute(async (trx) => {
    await lockSigningKeys(trx);
    for (const c of await clearSigningKeys(trx))
      await storeEncryptedPrivateKey(trx, c.kid, encryptPrivateJwk(kek, c.kid, c.private_jwk as object));
    const existing = await newestSigningKey(trx);
    if (existing) return existing;
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
    const kid = randomBytes(8).toString('hex');
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    return insertSigningKey(trx, { kid, privateJwkEncrypted: encryptPrivateJwk(kek, kid, privateJwk), publicJwk });
  });
  if (row.private_jwk_encrypted === null) throw new Error(`signing key ${row.kid} has no private key`);
  const jwk = decryptPrivateJwk(kek, row.kid, row.private_jwk_encrypted);
  return { kid: row.kid, privateKey: (await importJWK(jwk as JWK, SIGNING_ALG)) as CryptoKey };
}

/** The public keys that verify the portal's tokens, newest first. */
export function publicJwks(db: Kysely<Database>): Promise<JWK[]> {
  return publicJwkRows(db);
}
