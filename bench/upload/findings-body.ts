/**
 * The findings mode of bench/upload.ts: a session file of N findings as the scanner uploads
 * it (one `session_json` part), and the baseline it is measured against, the least work that
 * stores the same findings durably: parse the JSON, then one COPY of a row per finding into a
 * plain table with a primary key, in one transaction, through `pg`.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { largeSessionDoc, leanSessionDoc } from '@svc/test-support/large-session';
import type { UploadBody } from './client.ts';

/** full: every finding with evidence, description, references and a remediation entry (≈ 1.2 kB each); lean: identity only (≈ 230 B). */
export type FindingsShape = 'full' | 'lean';

/** The shape a size is sent in: full while the file fits under the upload limit, else lean (`auto`). */
export function shapeFor(findings: number, wanted: FindingsShape | 'auto', limitBytes: number): FindingsShape {
  if (wanted !== 'auto') return wanted;
  // ≈ 1,250 bytes a full finding (test-support/large-session.ts); a margin for the framing.
  return findings * 1_250 + 64 * 1024 < limitBytes ? 'full' : 'lean';
}

export interface FindingsUpload {
  body: UploadBody;
  /** The session file, as sent. */
  json: Buffer;
  clientId: string;
  sessionId: string;
}

/** A session file of `findings` findings under a fresh client (so a new target) unless `clientId` is given. */
export function findingsUpload(
  findings: number,
  shape: FindingsShape,
  ids: { clientId: string; sessionId: string },
): FindingsUpload {
  const doc =
    shape === 'full'
      ? largeSessionDoc(ids.sessionId, ids.clientId, findings)
      : leanSessionDoc(ids.sessionId, ids.clientId, findings);
  const json = Buffer.from(JSON.stringify(doc), 'utf8');
  const boundary = `----svc-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="session_json"; filename="session_results.json"\r\nContent-Type: application/json\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    body: {
      sessionId: ids.sessionId,
      head,
      payload: json,
      tail,
      contentType: `multipart/form-data; boundary=${boundary}`,
      length: head.length + json.length + tail.length,
      jsonBytes: json.length,
    },
    json,
    ...ids,
  };
}

/**
 * A round's three uploads of one new target, in the order they are sent: a first scan, a rescan
 * and a steady rescan, each under a session id of its own (`<clientId>-a`, `-b`, `-c`).
 */
export function roundUploads(findings: number, shape: FindingsShape, clientId: string) {
  const up = (suffix: string) => findingsUpload(findings, shape, { clientId, sessionId: `${clientId}-${suffix}` });
  return [
    ['first scan', up('a')],
    ['rescan', up('b')],
    ['steady rescan', up('c')],
  ] as const;
}

export const BASELINE_TABLE = 'bench_findings_copy';

export async function createBaselineTable(db: pg.Client): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS ${BASELINE_TABLE} (
    client_id text NOT NULL, session_id text NOT NULL, ordinal integer NOT NULL,
    fingerprint text, title text NOT NULL, severity text, host text, port integer, detail jsonb NOT NULL,
    PRIMARY KEY (client_id, session_id, ordinal))`);
}

/** COPY's text format: backslash, tab, newline and carriage return escaped; \N is NULL. */
const field = (v: unknown): string =>
  v === null || v === undefined
    ? '\\N'
    : String(v).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] ?? c);

/** The baseline: parse the file and COPY one row per finding in one transaction. Answers the rows stored. */
export async function copyBaseline(db: pg.Client, upload: FindingsUpload): Promise<number> {
  const doc = JSON.parse(upload.json.toString('utf8')) as { findings: Record<string, unknown>[] };
  const lines = doc.findings.map((f, ordinal) =>
    [
      upload.clientId,
      upload.sessionId,
      ordinal,
      f['fingerprint'],
      f['title'],
      f['severity'],
      f['host'],
      f['port'],
      JSON.stringify(f),
    ]
      .map(field)
      .join('\t'),
  );
  await db.query('BEGIN');
  try {
    const copy = db.query(
      copyFrom(
        `COPY ${BASELINE_TABLE} (client_id, session_id, ordinal, fingerprint, title, severity, host, port, detail) FROM STDIN`,
      ),
    );
    // Chunks of 1,000 lines, so the stream is not one string of the whole table.
    await pipeline(
      Readable.from(
        (function* () {
          for (let i = 0; i < lines.length; i += 1000) yield `${lines.slice(i, i + 1000).join('\n')}\n`;
        })(),
      ),
      copy,
    );
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
  return lines.length;
}
