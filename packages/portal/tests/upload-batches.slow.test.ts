import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { largeSessionDoc } from '@svc/test-support/large-session';
import { createLicense, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { postUpload, sessionParts } from '@svc/test-support/upload';
import { pgArrayLiteral, textListCell } from '../src/db/bulk.ts';
import { recordKeyOf } from '../src/records/evidence.ts';
import { indexRowsOf } from '../src/sessions/findings-index.ts';
import { DETAIL_PAGE } from '../src/sessions/detail-pages.ts';
import { INSERT_CHUNK } from '../src/sessions/findings-index-queries.ts';
import { WRITE_CHUNK } from '../src/records/queries.ts';

/**
 * The set-based writes of an upload (db/bulk.ts): a session's findings index, its findings of
 * record and their history go to PostgreSQL a chunk of 1,000 rows per statement, one array
 * per column. A session of exactly one chunk and one of a chunk and one row are stored whole,
 * every column as the index computes it, and a rescan of each moves every record the same way.
 */

// One portal for the file: each test uploads under a client of its own.
let portal: TestPortal;
let db: pg.Client;
usePortalWithDb((p) => {
  ({ portal, db } = p);
});

describe('array parameters', () => {
  it('carry any text, NULL and the text "NULL" through PostgreSQL unchanged', async () => {
    const texts = [
      'plain',
      '',
      'NULL',
      null,
      'a,b',
      '{x}',
      'quote " here',
      'back\\slash \\" both',
      'tab\tnew\nline\r',
      '  spaces  ',
      'ünïcødé 🎉',
      "it's",
    ];
    const { rows } = await db.query('SELECT $1::text[] AS v', [pgArrayLiteral(texts)]);
    expect(rows[0].v).toEqual(texts);
  });

  it('carry numbers, booleans and times as the column type reads them', async () => {
    const at = new Date('2026-11-29T18:01:02.345Z');
    const { rows } = await db.query(
      'SELECT $1::integer[] AS i, $2::double precision[] AS d, $3::boolean[] AS b, $4::timestamptz[] AS t',
      [
        pgArrayLiteral([0, -1, null, 65535]),
        pgArrayLiteral([0.1, 7.4, null]),
        pgArrayLiteral([true, false, null]),
        pgArrayLiteral([at, null]),
      ],
    );
    expect(rows[0]).toEqual({ i: [0, -1, null, 65535], d: [0.1, 7.4, null], b: [true, false, null], t: [at, null] });
  });

  it('carry a number to a text column as its decimal text, and every time as itself, repeated or changed', async () => {
    const at = new Date('2026-11-29T18:01:02.345Z');
    const again = new Date(at.getTime());
    const moved = new Date(at.getTime());
    const first = pgArrayLiteral([at, again, at]);
    moved.setTime(at.getTime() + 1);
    const { rows } = await db.query('SELECT $1::text[] AS n, $2::timestamptz[] AS a, $3::timestamptz[] AS b', [
      pgArrayLiteral([0, -1.5, 1e21, 65535]),
      first,
      pgArrayLiteral([moved, at, moved, null]),
    ]);
    expect(rows[0]).toEqual({
      n: ['0', '-1.5', '1e+21', '65535'],
      a: [at, at, at],
      b: [moved, at, moved, null],
    });
    expect(() => pgArrayLiteral([new Date(Number.NaN)])).toThrow(RangeError);
  });

  it('carry a list of text per row, each row cast to text[] by itself: any text, empty lists and NULL', async () => {
    const lists = [
      ['CVE-2024-0001', 'CVE-2023-1111'],
      [],
      null,
      ['a "quoted" \\ {braced,} NULL', '', 'NULL'],
      ['ünïcødé 🎉'],
    ];
    const { rows } = await db.query(
      'SELECT json_agg(x.v::text[] ORDER BY x.n) AS v FROM unnest($1::text[]) WITH ORDINALITY AS x(v, n)',
      [pgArrayLiteral(lists.map(textListCell))],
    );
    expect(rows[0].v).toEqual(lists);
  });

  it('of no element are an empty array', async () => {
    const { rows } = await db.query('SELECT $1::text[] AS v', [pgArrayLiteral([])]);
    expect(rows[0].v).toEqual([]);
  });
});

describe('an upload at the chunk boundary', () => {
  async function upload(key: LicenseFixture, sessionId: string, n: number) {
    const doc = largeSessionDoc(sessionId, key.record.client_id as string, n);
    const res = await postUpload(portal.url, key.key, sessionParts(doc));
    expect(res.status).toBe(200);
    return { doc, answer: res.body as { findings: Record<string, number> } };
  }

  // The index's chunks and the records' are the same size: one pair of uploads crosses both.
  for (const n of [INSERT_CHUNK, INSERT_CHUNK + 1]) {
    it(`stores ${n} findings whole: every index row, detail, record and history line`, async () => {
      expect([INSERT_CHUNK, WRITE_CHUNK]).toEqual([1000, 1000]);
      // A client of its own: the other size's records are not this target's.
      const key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('batches') });
      const clientId = key.record.client_id as string;
      const first = await upload(key, `batch-${n}-a`, n);
      const sum = (c: Record<string, number>) => (c['new'] ?? 0) + (c['persistent'] ?? 0) + (c['reopened'] ?? 0);
      expect(sum(first.answer.findings)).toBe(n);

      // The index: every row as indexRowsOf computes it (what the upload did aside), in file order.
      const { rows } = await db.query(
        `SELECT f.*, d.details::json -> f.ordinal::text AS detail
         FROM session_findings f JOIN session_finding_detail_pages d
           ON d.client_id = f.client_id AND d.session_id = f.session_id AND d.page = f.ordinal / $3
         WHERE f.client_id = $1 AND f.session_id = $2 ORDER BY f.ordinal`,
        [clientId, `batch-${n}-a`, DETAIL_PAGE],
      );
      const expected = indexRowsOf(first.doc);
      expect(rows).toHaveLength(n);
      rows.forEach((row, i) => {
        const { change: _c, detail, ...want } = expected[i] as (typeof expected)[number];
        const { change: _d, client_id: _e, session_id: _f, detail: stored, ...got } = row;
        expect(got).toEqual(want);
        expect(stored).toEqual(JSON.parse(detail));
      });
      const pages = await db.query(
        'SELECT count(*)::int AS n FROM session_finding_detail_pages WHERE client_id = $1 AND session_id = $2',
        [clientId, `batch-${n}-a`],
      );
      expect(pages.rows[0].n).toBe(Math.ceil(n / DETAIL_PAGE));

      // The records: one per finding, each with its finding's identity.
      const target = first.doc.metadata.target;
      const records = await db.query(
        'SELECT fingerprint, title, host, port, cve_ids, seen_in, status FROM finding_records WHERE client_id = $1 AND target = $2',
        [clientId, target],
      );
      expect(records.rows).toHaveLength(n);
      const byKey = new Map(records.rows.map((r) => [r.fingerprint, r]));
      first.doc.findings.forEach((f) => {
        const r = byKey.get(recordKeyOf(f));
        expect(r).toMatchObject({ title: f.title, host: f.host, port: f.port, cve_ids: f.references.cve });
        expect(r?.seen_in).toEqual([`batch-${n}-a`]);
      });

      // A rescan: every record seen again; its history has a line for each record whose status
      // moved (new -> persistent: the even findings, the file calls the odd ones persistent), in file order.
      const before = await db.query('SELECT count(*)::int AS n FROM finding_history WHERE client_id = $1', [clientId]);
      const rescan = await upload(key, `batch-${n}-b`, n);
      expect(rescan.answer.findings).toMatchObject({ new: 0, persistent: n, reopened: 0 });
      const after = await db.query(
        `SELECT fingerprint FROM finding_history WHERE client_id = $1 AND session_id = $2 AND field = 'status' ORDER BY id`,
        [clientId, `batch-${n}-b`],
      );
      const moved = first.doc.findings.filter((_f, i) => i % 2 === 0).map((f) => recordKeyOf(f));
      expect(after.rows.map((r) => r.fingerprint)).toEqual(moved);
      const total = await db.query('SELECT count(*)::int AS n FROM finding_history WHERE client_id = $1', [clientId]);
      expect(total.rows[0].n - before.rows[0].n).toBe(after.rows.length);
      const seen = await db.query(
        'SELECT count(*)::int AS n FROM finding_records WHERE client_id = $1 AND target = $2 AND seen_in = $3',
        [clientId, target, [`batch-${n}-b`, `batch-${n}-a`]],
      );
      expect(seen.rows[0].n).toBe(n);

      // Both sessions count every finding, the first one moved along with its records.
      const counts = await db.query(
        `SELECT session_id, sum(n)::int AS n, sum(n) FILTER (WHERE status = 'persistent')::int AS persistent
         FROM session_triage_counts WHERE client_id = $1 GROUP BY 1 ORDER BY 1`,
        [clientId],
      );
      expect(counts.rows.filter((r) => r.session_id.startsWith(`batch-${n}-`))).toEqual([
        { session_id: `batch-${n}-a`, n, persistent: n },
        { session_id: `batch-${n}-b`, n, persistent: n },
      ]);
    });
  }
});

describe('a rescan', () => {
  /**
   * How many of the target's records are now a heap-only version: one an update wrote on the
   * record's own page without an entry in any index (a HOT update; pageinspect reads the
   * version's header, HEAP_ONLY_TUPLE being 0x8000 of t_infomask2).
   */
  async function heapOnly(clientId: string, target: string): Promise<number> {
    await db.query('CREATE EXTENSION IF NOT EXISTS pageinspect');
    const { rows } = await db.query(
      `SELECT count(*)::int AS n
       FROM (SELECT (ctid::text::point)[0]::int AS page, (ctid::text::point)[1]::int AS item
             FROM finding_records WHERE client_id = $1 AND target = $2) r
       JOIN LATERAL heap_page_items(get_raw_page('finding_records', r.page)) h ON h.lp = r.item
       WHERE (h.t_infomask2 & 32768) <> 0`,
      [clientId, target],
    );
    return rows[0].n;
  }

  it('rewrites records on their own pages and no index, the second scan (new to persistent) as the third (migration 0042)', async () => {
    const { rows } = await db.query(`SELECT reloptions FROM pg_class WHERE relname = 'finding_records'`);
    expect(rows[0].reloptions).toEqual(['fillfactor=50']);

    const key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('steady') });
    const clientId = key.record.client_id as string;
    const n = 2000;
    const counts = [];
    for (const id of ['steady-a', 'steady-b', 'steady-c']) {
      const doc = largeSessionDoc(id, clientId, n);
      const res = await postUpload(portal.url, key.key, sessionParts(doc));
      expect(res.status).toBe(200);
      counts.push(await heapOnly(clientId, doc.metadata.target));
    }
    // The first scan inserts; the second moves every new record to persistent, which no index
    // names (the open records' partial indexes name is_open), and the third changes nothing an
    // index names. Each fits its new versions on their pages. With status in those indexes'
    // predicates (before 0042) the second scan made no heap-only version.
    expect(counts[0]).toBe(0);
    expect(counts[1]).toBeGreaterThan((n * 3) / 4);
    expect(counts[2]).toBeGreaterThan((n * 3) / 4);
  });
});
