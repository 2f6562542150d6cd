import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { decryptPrivateJwk, encryptPrivateJwk } from './key-encryption.ts';

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
    await sql`SELECT pg_advisory_xact_lock(hashtext('svc.identity_signing_keys'))`.execute(trx);
    const clear = await trx
      .selectFrom('identity_signing_keys')
      .select(['kid', 'private_jwk'])
      .where('private_jwk', 'is not', null)
      .execute();
    for (const c of clear) {
      await trx
        .updateTable('identity_signing_keys')
        .set({ private_jwk_encrypted: encryptPrivateJwk(kek, c.kid, c.private_jwk as object), private_jwk: null })
        .where('kid', '=', c.kid)
        .execute();
    }
    const existing = await trx
      .selectFrom('identity_signing_keys')
      .select(['kid', 'private_jwk_encrypted'])
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (existing) return existing;
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
    const kid = randomBytes(8).toString('hex');
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    return trx
      .insertInto('identity_signing_keys')
      .values({
        kid,
        private_jwk: null,
        private_jwk_encrypted: encryptPrivateJwk(kek, kid, privateJwk),
        public_jwk: JSON.stringify(publicJwk),
      })
      .returning(['kid', 'private_jwk_encrypted'])
      .executeTakeFirstOrThrow();
  });
  if (row.private_jwk_encrypted === null) throw new Error(`signing key ${row.kid} has no private key`);
  const jwk = decryptPrivateJwk(kek, row.kid, row.private_jwk_encrypted);
  return { kid: row.kid, privateKey: (await importJWK(jwk as JWK, SIGNING_ALG)) as CryptoKey };
}

export async function publicJwks(db: Kysely<Database>): Promise<JWK[]> {
  const rows = await db
    .selectFrom('identity_signing_keys')
    .select('public_jwk')
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => r.public_jwk as JWK);
}
