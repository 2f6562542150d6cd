import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Share tokens were stored in clear, so a backup (or any read of the
// database) opened every shared report. A token is now looked up by its SHA-256 (hex, the rule
// of license keys) and kept otherwise only sealed under the key-encryption key
// (sessions/share-seal.ts). The key is not known here: this hashes every stored token, and the
// portal's start seals the clear ones and empties `token` (share.ts, sealStoredShareTokens);
// until then a clear token is read as it is, and a backup refuses to write one.
//
// The audit log's scan_completed events held each upload's share URL with its token: they keep
// the URL with the token redacted, as the portal now records them (sessions/commit.ts).
//
// The trigger keeps the hash right for rows a replica of an earlier version writes during a
// rolling upgrade (it inserts and rotates `token` alone); this version never writes `token`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE share_tokens ADD COLUMN token_hash text;
    UPDATE share_tokens SET token_hash = encode(sha256(convert_to(token, 'UTF8')), 'hex');
    ALTER TABLE share_tokens ALTER COLUMN token_hash SET NOT NULL;
    ALTER TABLE share_tokens DROP CONSTRAINT share_tokens_pkey;
    ALTER TABLE share_tokens ADD PRIMARY KEY (token_hash);
    ALTER TABLE share_tokens ALTER COLUMN token DROP NOT NULL;
    ALTER TABLE share_tokens ADD COLUMN token_sealed text;
    ALTER TABLE share_tokens ADD CONSTRAINT share_tokens_token_kept
      CHECK (token IS NOT NULL OR token_sealed IS NOT NULL);

    UPDATE audit_events
      SET data = jsonb_set(data, '{share_url}',
        to_jsonb(regexp_replace(data->>'share_url', 'token=[0-9A-Fa-f]{64}', 'token=[redacted]')))
      WHERE event_type = 'scan_completed' AND data->>'share_url' ~ 'token=[0-9A-Fa-f]{64}';

    CREATE FUNCTION share_tokens_hash_clear() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.token IS NOT NULL THEN
        NEW.token_hash := encode(sha256(convert_to(NEW.token, 'UTF8')), 'hex');
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER share_tokens_hash_clear BEFORE INSERT OR UPDATE OF token ON share_tokens
      FOR EACH ROW EXECUTE FUNCTION share_tokens_hash_clear();
  `.execute(db);
}
