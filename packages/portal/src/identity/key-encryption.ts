import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fsyncPath } from '@svc/protocol/node';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/index.ts';

/**
 * The identity provider's private key is stored in the database encrypted with AES-256-GCM
 * under a key that is not in the database (a backup alone must not mint admin tokens):
 * SVC_IDENTITY_KEY_ENCRYPTION_KEY, or else <SVC_DATA_DIR>/identity-key, created (mode 600)
 * on first start. Replicas sharing a database must share this key. The same key encrypts the
 * webhook signing secrets (webhooks/secrets.ts), also in external-provider mode.
 */
export const KEY_FILE = 'identity-key';
const VERSION = 'v1';

function keyFromFile(text: string, file: string): Buffer {
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new ConfigError('SVC_IDENTITY_KEY_ENCRYPTION_KEY', `is unset and ${file} does not hold 64 hex digits`);
  return Buffer.from(hex, 'hex');
}

export async function loadKeyEncryptionKey(config: Config, logger: Logger): Promise<Buffer> {
  if (config.identity.keyEncryptionKey !== null) return config.identity.keyEncryptionKey;
  const file = path.join(config.dataDir, KEY_FILE);
  try {
    return keyFromFile(await fs.readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.mkdir(config.dataDir, { recursive: true });
  try {
    // 'wx': two processes starting on one data directory cannot both write a key.
    await fs.writeFile(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    // On disk, name and content, before anything is encrypted with it: a key lost to a power cut
    // would leave the secrets in the database unreadable.
    await fsyncPath(file);
    await fsyncPath(config.dataDir);
    logger.info({ file }, 'generated the identity key encryption key (SVC_IDENTITY_KEY_ENCRYPTION_KEY unset)');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // An external database may be shared by replicas with other data directories.
  if (config.databaseUrl !== null)
    logger.warn(
      { file },
      'SVC_IDENTITY_KEY_ENCRYPTION_KEY is unset: using the key in the data directory; replicas sharing DATABASE_URL need the same key',
    );
  return keyFromFile(await fs.readFile(file, 'utf8'), file);
}

const b64 = (b: Buffer) => b.toString('base64url');

/**
 * `v1.<iv>.<ciphertext + tag>`, base64url, AES-256-GCM under `kek`. `aad` (the row's id) is
 * authenticated data, so a row's ciphertext cannot be moved to another row.
 */
export function sealSecret(kek: Buffer, aad: string, clear: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${VERSION}.${b64(iv)}.${b64(body)}`;
}

/** The clear text, or null when `kek` and `aad` do not open `stored`. */
export function openSecret(kek: Buffer, aad: string, stored: string): string | null {
  const [version, iv, body] = stored.split('.');
  if (version !== VERSION || !iv || !body) return null;
  const raw = Buffer.from(body, 'base64url');
  if (raw.length < 17) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(0, raw.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The kid is the authenticated data. */
export function encryptPrivateJwk(kek: Buffer, kid: string, jwk: object): string {
  return sealSecret(kek, kid, JSON.stringify(jwk));
}

/** The private JWK, or a ConfigError when the key does not decrypt it (never the key or the JWK in the message). */
export function decryptPrivateJwk(kek: Buffer, kid: string, stored: string): Record<string, unknown> {
  const clear = openSecret(kek, kid, stored);
  if (clear === null)
    throw new ConfigError(
      'SVC_IDENTITY_KEY_ENCRYPTION_KEY',
      `does not decrypt the identity provider's signing key (kid ${kid}): start with the key (or the data directory's ${KEY_FILE}) this database was first started with`,
    );
  return JSON.parse(clear) as Record<string, unknown>;
}
