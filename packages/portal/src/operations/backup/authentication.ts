import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { KEY_FILE } from '../../identity/key-encryption.ts';
import { ArchiveError, MAC_ENTRY, MANIFEST, type Manifest } from './format.ts';

/**
 * Archives are authenticated: checksums alone let anyone who can write an
 * archive edit a member and recompute them. `manifest.hmac`, the entry after the manifest,
 * holds an HMAC-SHA256 of the manifest's exact bytes; the manifest lists the size and SHA-256
 * of every other entry and restore accepts nothing unlisted, so the code covers the whole
 * archive. Its key is derived (HKDF-SHA256) from the key-encryption key, which the operator
 * holds and no archive contains: who can edit an archive but lacks that key cannot make one
 * restore. `key_id` names the key without revealing it, so a wrong key reads as one.
 */
const ALGORITHM = 'HMAC-SHA256';
const INFO = 'svc-portal backup archive authentication';
/** The first schema whose archives are always authenticated (it came with the authentication). */
export const AUTHENTICATED_SINCE_SCHEMA = '0020_share_token_hashes';
export const MAX_MAC_BYTES = 4096;

interface MacFile {
  algorithm: typeof ALGORITHM;
  key_id: string;
  mac: string;
}

function macKey(kek: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', kek, Buffer.alloc(0), INFO, 32));
}

const keyIdOf = (key: Buffer) => createHmac('sha256', key).update('key id').digest('hex').slice(0, 16);

/** The `manifest.hmac` entry for these manifest bytes. */
export function authenticateManifest(kek: Buffer, manifest: Buffer): Buffer {
  const key = macKey(kek);
  const file: MacFile = {
    algorithm: ALGORITHM,
    key_id: keyIdOf(key),
    mac: createHmac('sha256', key).update(manifest).digest('hex'),
  };
  return Buffer.from(`${JSON.stringify(file, null, 2)}\n`);
}

const KEY_HINT = `restore with SVC_IDENTITY_KEY_ENCRYPTION_KEY (or the data directory's ${KEY_FILE}) of the portal the backup was taken from`;

/** Refuses (ArchiveError) unless `macText` is this key's code for exactly these manifest bytes. */
export function checkManifest(kek: Buffer, manifest: Buffer, macText: Buffer): void {
  let file: Partial<MacFile>;
  try {
    file = JSON.parse(macText.toString('utf8')) as Partial<MacFile>;
  } catch {
    throw new ArchiveError(`the archive's ${MAC_ENTRY} is damaged: it is not JSON; restore refused`);
  }
  if (file?.algorithm !== ALGORITHM || typeof file.mac !== 'string' || !/^[0-9a-f]{64}$/.test(file.mac))
    throw new ArchiveError(`the archive's ${MAC_ENTRY} is damaged: no ${ALGORITHM} code in it; restore refused`);
  const key = macKey(kek);
  const mine = keyIdOf(key);
  if (file.key_id !== mine)
    throw new ArchiveError(
      `the archive is authenticated with another key (key id ${String(file.key_id)}, this key's is ${mine}): ${KEY_HINT}`,
    );
  const expected = createHmac('sha256', key).update(manifest).digest();
  if (!timingSafeEqual(expected, Buffer.from(file.mac, 'hex')))
    throw new ArchiveError(
      `the archive was changed after it was written: ${MANIFEST} does not match its authentication code in ${MAC_ENTRY} (an edited entry with recomputed checksums, or an edited manifest); restore refused`,
    );
}

/**
 * A manifest of format version 1 comes from before archives were authenticated: refused unless
 * the operator allows it; one claiming a schema of this version or later was downgraded by hand.
 */
export function checkUnauthenticated(manifest: Manifest, allowUnauthenticated: boolean): void {
  if (manifest.schema_migration >= AUTHENTICATED_SINCE_SCHEMA)
    throw new ArchiveError(
      `the archive has no ${MAC_ENTRY}, yet its schema ${manifest.schema_migration} is one whose backups always have one: it was changed after it was written; restore refused`,
    );
  if (!allowUnauthenticated)
    throw new ArchiveError(
      `the archive was written before backups were authenticated (format version 1, schema ${manifest.schema_migration}), so edits to it cannot be detected; if it comes from a place only you can write, restore it with --allow-unauthenticated`,
    );
}
