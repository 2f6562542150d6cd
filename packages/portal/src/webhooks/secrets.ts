import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ConfigError } from '../config/index.ts';
import type { Database } from '../db/schema.ts';
import { KEY_FILE, openSecret, sealSecret } from '../identity/key-encryption.ts';
import { redactShareTokens } from '../domain/redaction.ts';
import {
  clearBodyRows,
  clearSecretRows,
  oneEncryptedSecret,
  storeEncryptedSecret,
  storeSealedBody,
} from './queries.ts';

/** What of a subscription row holds its signing secret. */
export interface StoredSecret {
  id: string;
  signing_secret: string | null;
  signing_secret_encrypted: string | null;
}

/** A stored secret that does not decrypt under the key-encryption key (a wrong key, a tampered row). */
export class UndecryptableSecret extends Error {
  constructor(what: string, kind: 'secret' | 'sealed' = 'secret') {
    super(
      `${kind === 'secret' ? `the signing secret of ${what}` : what} does not decrypt with SVC_IDENTITY_KEY_ENCRYPTION_KEY`,
    );
  }
}

const bodyAad = (eventId: string) => `webhook-body:${eventId}`;

const CACHE_MAX = 10_000;

/**
 * Webhook signing secrets at rest: AES-256-GCM under the identity provider's key-encryption
 * key (identity/key-encryption.ts), the subscription id as authenticated data. A database
 * backup alone then cannot forge deliveries. A clear secret (written by an older version, until
 * the next start encrypts it) is still read. Decrypted secrets are kept in memory by their
 * ciphertext, so a busy event stream does not decrypt every secret on every event.
 */
export class WebhookSecrets {
  readonly #kek: Buffer;
  readonly #cache = new Map<string, string>();

  constructor(kek: Buffer) {
    this.#kek = kek;
  }

  seal(id: string, secret: string): string {
    return sealSecret(this.#kek, id, secret);
  }

  /**
   * The event id of a staged event (migration 0036), the same in every process that sends it:
   * a sweep that takes it over from a fan-out that was late past a lease sends it under the id
   * the late one used, so receivers de-duplicate it. Keyed by the key-encryption key, so ids
   * tell nothing of the audit log and never repeat across installations.
   */
  eventId(staged: string): string {
    return `evt_${createHmac('sha256', this.#kek).update(`webhook-event:${staged}`).digest('hex').slice(0, 16)}`;
  }

  /** A delivery body with a secret in it, as stored (migration 0036); its event id is the authenticated data. */
  sealBody(eventId: string, body: string): string {
    return sealSecret(this.#kek, bodyAad(eventId), body);
  }

  /** The body a delivery sends: the stored one, or its sealed copy opened; UndecryptableSecret when that fails. */
  bodyOf(d: { event_id: string; body: string; body_sealed: string | null }): string {
    if (d.body_sealed === null) return d.body;
    const clear = openSecret(this.#kek, bodyAad(d.event_id), d.body_sealed);
    if (clear === null) throw new UndecryptableSecret(`the body of event ${d.event_id}`, 'sealed');
    return clear;
  }

  /** The clear secret; UndecryptableSecret when it does not decrypt. */
  open(row: StoredSecret): string {
    const stored = row.signing_secret_encrypted;
    if (stored === null) {
      if (row.signing_secret === null) throw new UndecryptableSecret(row.id);
      return row.signing_secret;
    }
    const key = `${row.id}\n${stored}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const clear = openSecret(this.#kek, row.id, stored);
    if (clear === null) throw new UndecryptableSecret(row.id);
    if (this.#cache.size >= CACHE_MAX) this.#cache.clear();
    this.#cache.set(key, clear);
    return clear;
  }
}

/**
 * At start: seal the delivery bodies an older version stored with a share token in clear
 * (migration 0036), leaving the token redacted in `body`, as the audit log has it.
 */
export async function sealStoredBodies(db: Kysely<Database>, secrets: WebhookSecrets): Promise<number> {
  const rows = await clearBodyRows(db);
  for (const row of rows)
    await storeSealedBody(db, row.id, row.body, redactShareTokens(row.body), secrets.sealBody(row.event_id, row.body));
  return rows.length;
}

/**
 * At start: encrypt every secret still stored in clear and empty its clear column; then check
 * that the key opens a stored secret, so a wrong key is a clear start-up error (also in
 * external-provider mode, where no signing key would catch it) rather than failed deliveries.
 */
export async function encryptStoredSecrets(db: Kysely<Database>, secrets: WebhookSecrets): Promise<void> {
  for (const row of await clearSecretRows(db))
    await storeEncryptedSecret(db, row.id, row.signing_secret, secrets.seal(row.id, row.signing_secret));
  const sample = await oneEncryptedSecret(db);
  if (sample === undefined) return;
  try {
    secrets.open(sample);
  } catch {
    throw new ConfigError(
      'SVC_IDENTITY_KEY_ENCRYPTION_KEY',
      `does not decrypt the webhook signing secrets: start with the key (or the data directory's ${KEY_FILE}) this database was first started with`,
    );
  }
}
