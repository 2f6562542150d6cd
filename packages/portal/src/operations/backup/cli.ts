import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import portalPackage from '../../../package.json' with { type: 'json' };
import { openBlobStore } from '../../blobs/open.ts';
import type { BlobStore } from '../../blobs/store.ts';
import { callerDirectory } from '../../config/caller-dir.ts';
import { ConfigError, type Config, loadConfig } from '../../config/index.ts';
import type { DatabaseHandle } from '../../db/pool.ts';
import { KEY_FILE, loadKeyEncryptionKey } from '../../identity/key-encryption.ts';
import { createLogger } from '../../logging.ts';
import { withDatabase } from '../database.ts';
import { createBackup } from './backup.ts';
import { ArchiveError, type Manifest, UNAUTHENTICATED_VERSION } from './format.ts';
import { RestoreRefused, restoreBackup, verifyArchive } from './restore.ts';
import { recordBackup, STATUS_FILE } from './status.ts';

/**
 * `npm run backup -- <archive>`, `npm run restore -- <archive>`, `npm run restore -- --verify <archive>`:
 * the portal's own configuration (DATABASE_URL or the embedded server under SVC_DATA_DIR)
 * says where the database and the session files are, and its key-encryption key
 * (SVC_IDENTITY_KEY_ENCRYPTION_KEY or <data dir>/identity-key) authenticates the archive.
 */

/** npm runs scripts from the repository root; a relative path means the caller's directory. */
const resolveArchive = (file: string) => path.resolve(callerDirectory(), file);

interface State {
  database: DatabaseHandle;
  blobs: BlobStore;
}

/** The portal's database and blob store, as its configuration names them, for the length of `run`. */
function withState<T>(config: Config, run: (state: State) => Promise<T>): Promise<T> {
  return withDatabase(config, async (database) => {
    const blobs = await openBlobStore(config);
    try {
      return await run({ database, blobs: blobs.store });
    } finally {
      blobs.close();
    }
  });
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

/**
 * The key the portal runs with (backup) or the restored portal will start with; never generated
 * here, as a new one opens nothing and authenticates no archive.
 */
async function portalKey(config: Config, missing: string): Promise<Buffer> {
  const file = path.join(config.dataDir, KEY_FILE);
  if (config.identity.keyEncryptionKey === null && !(await exists(file)))
    throw new RestoreRefused(`SVC_IDENTITY_KEY_ENCRYPTION_KEY is unset and ${file} does not exist: ${missing}`);
  return loadKeyEncryptionKey(config, createLogger('silent'));
}

const restoringKey = (config: Config) =>
  portalKey(config, `set the key, or copy ${KEY_FILE} from the data directory of the portal the backup was taken from`);

async function backup(file: string): Promise<void> {
  const config = loadConfig();
  const keyEncryptionKey = await portalKey(
    config,
    `set the key the portal runs with, or run the backup with the portal's SVC_DATA_DIR`,
  );
  const result = await withState(config, ({ database, blobs }) =>
    createBackup({
      pool: database.pool,
      blobs,
      archive: resolveArchive(file),
      portalVersion: portalPackage.version,
      keyEncryptionKey,
      onRetry: (err, attempt) =>
        process.stderr.write(
          `attempt ${attempt}: ${err.message} (changed after the snapshot); taking a new snapshot\n`,
        ),
    }),
  );
  process.stdout.write(
    `backup written: ${result.archive} (${result.tables} tables, ${result.rows} rows, ${result.objects} objects, ${result.bytes} bytes, zstd-compressed)\n`,
  );
  // The portal exports this time (svc_backup_last_success_timestamp_seconds); the backup stands without it.
  const completed = { completed_at: new Date().toISOString(), archive: result.archive, bytes: result.bytes };
  await recordBackup(config.dataDir, completed).catch((err: unknown) =>
    process.stderr.write(
      `warning: the backup is written, but ${path.join(config.dataDir, STATUS_FILE)} could not be: ${(err as Error).message}; the backup age alert will not see it\n`,
    ),
  );
}

/** Said on stderr whenever an archive without authentication is accepted. */
function warnUnauthenticated(archive: string, manifest: Manifest): void {
  if (manifest.format_version === UNAUTHENTICATED_VERSION)
    process.stderr.write(
      `warning: ${archive} is not authenticated (written before backups were): it was accepted without a check for edits (--allow-unauthenticated)\n`,
    );
}

async function restore(file: string, opts: { verify?: boolean; allowUnauthenticated?: boolean }): Promise<void> {
  const archive = resolveArchive(file);
  if (!(await exists(archive))) throw new ArchiveError(`${archive} does not exist`);
  const config = loadConfig();
  const keyEncryptionKey = await restoringKey(config);
  const auth = { keyEncryptionKey, allowUnauthenticated: opts.allowUnauthenticated === true };
  if (opts.verify) {
    const manifest = await verifyArchive(archive, auth);
    warnUnauthenticated(archive, manifest);
    const authenticated = manifest.format_version === UNAUTHENTICATED_VERSION ? '' : ' and the archive is authentic';
    process.stdout.write(`${archive}: ${manifest.entries.length} entries match the manifest${authenticated}\n`);
    return;
  }
  const result = await withState(config, ({ database, blobs }) =>
    restoreBackup({ pool: database.pool, db: database.db, blobs, archive, ...auth }),
  );
  warnUnauthenticated(archive, result.manifest);
  process.stdout.write(
    `restored ${archive}: ${result.rows} rows, ${result.objects} objects, taken ${result.manifest.created_at} (schema ${result.manifest.schema_migration}); start the portal to migrate it to this version\n`,
  );
}

const program = new Command('portal-backup').description('Back up and restore the portal (database and session files)');
program.command('backup').argument('<archive>', 'file to write (never overwritten)').action(backup);
program
  .command('restore')
  .argument('<archive>', 'archive written by backup')
  .option('--verify', 'only check the archive: its authentication, and every entry against the manifest')
  .option(
    '--allow-unauthenticated',
    'accept an archive written before backups were authenticated (format version 1); edits to it go undetected',
  )
  .action(restore);

try {
  await program.parseAsync();
} catch (err) {
  const known = err instanceof ArchiveError || err instanceof RestoreRefused || err instanceof ConfigError;
  process.stderr.write(`${known ? '' : 'failed: '}${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(known ? 2 : 1);
}
