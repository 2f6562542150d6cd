import { openSecret } from '../../identity/key-encryption.ts';
import { ShareTokenSeal } from '../../sessions/share-seal.ts';
import { type Conn, sealedSecrets, sealedShareTokenSample } from './queries.ts';

/**
 * What of the database `kek` does not open (`signing key <kid>`, `webhook secret <id>`, `share
 * token <hash>…`), or null when it opens everything sealed: the signing keys and webhook
 * secrets, and one share token (a wrong key opens none of them).
 */
export async function keyOpensSecrets(conn: Conn, kek: Buffer): Promise<string | null> {
  for (const s of await sealedSecrets(conn)) if (openSecret(kek, s.id, s.sealed) === null) return `${s.what} ${s.id}`;
  const token = await sealedShareTokenSample(conn);
  if (token !== undefined && !new ShareTokenSeal(kek).opens(token.hash, token.sealed))
    return `share token ${token.hash.slice(0, 12)}…`;
  return null;
}
